"""The client's side of challenges and notices: the accept policy, and the lines it prints."""

from __future__ import annotations

from typing import Any

import pytest

from client_sdk import Agent
from client_sdk._challenge import ChallengePolicy, expected_line, notice_line
from client_sdk._loader import factory_for
from client_sdk.examples.random_bot import RandomBot
from client_sdk.proto import referee_pb2 as pb


def _offer(challenger: str) -> pb.ChallengeOffer:
    return pb.ChallengeOffer(challenge_id="c1", challenger=challenger, game="tetress")


def test_default_policy_accepts_everyone() -> None:
    """Without --accept-challenges a bot accepts any challenge, echoing the challenge id."""
    answer = ChallengePolicy.parse("all").answer(_offer("carl/x"))
    assert answer.accept and answer.challenge_id == "c1"


def test_none_declines_with_a_reason() -> None:
    """--accept-challenges none declines and says so to the challenger."""
    answer = ChallengePolicy.parse("none").answer(_offer("carl/x"))
    assert not answer.accept and answer.reason == "it accepts no challenges"


def test_from_list_matches_owners_and_exact_bots() -> None:
    """from:alice,bob/greedy accepts alice's bots and bob/greedy only, case-insensitively."""
    policy = ChallengePolicy.parse("from:Alice,bob/greedy")
    assert policy.answer(_offer("alice/anything")).accept
    assert policy.answer(_offer("bob/greedy")).accept
    refused = policy.answer(_offer("bob/other"))
    assert not refused.accept
    assert refused.reason == "it accepts challenges only from alice, bob/greedy"


@pytest.mark.parametrize("text", ["some", "from:", "from: ,"])
def test_bad_policy_names_the_forms(text: str) -> None:
    """An unknown policy is refused with the accepted forms named."""
    with pytest.raises(ValueError, match="expected all, none or from:NAME"):
        ChallengePolicy.parse(text)


def test_tournament_game_start_is_announced_from_its_labels() -> None:
    """A GameStart labelled with a tournament prints which tournament, round, board and game."""
    labels = {"tournament": "week3", "tournamentRound": "2", "board": "1", "leg": "4"}
    assert expected_line(labels) == "your tournament 'week3' round 2, board 1, game 4 starts"
    assert expected_line({"mode": "casual"}) is None


def test_skipped_notice_is_marked() -> None:
    """A SKIPPED notice prints with a 'skipped:' prefix; other notices as sent."""
    skipped = pb.Notice(kind=pb.NOTICE_KIND_SKIPPED, text="your bot was not connected")
    assert notice_line(skipped) == "skipped: your bot was not connected"
    waiting = pb.Notice(kind=pb.NOTICE_KIND_WAITING, text="waiting: no opponent for att yet")
    assert notice_line(waiting) == "waiting: no opponent for att yet"


class _Picky(Agent):
    made = 0

    def __init__(self) -> None:
        type(self).made += 1

    def accept_challenge(self, challenger: str, game: str) -> bool:
        if challenger == "eve/x":
            raise ValueError("no eve")
        return challenger.startswith("alice/") and game == "tetress"

    def choose_move(self, state: Any, clocks: Any) -> Any:
        return next(iter(state.legal_moves))


def test_agent_hook_decides_when_no_policy_is_given() -> None:
    """No --accept-challenges: the Agent's accept_challenge answers each offer, on one
    instance kept for answering; a refusal and a raising hook decline with a reason."""
    _Picky.made = 0
    policy = ChallengePolicy.of(None, factory_for(_Picky))
    assert policy.answer(_offer("alice/a")).accept
    refused = policy.answer(_offer("bob/b"))
    assert not refused.accept and refused.reason == "its accept_challenge said no"
    raised = policy.answer(_offer("eve/x"))
    assert not raised.accept and raised.reason == "its accept_challenge raised ValueError"
    assert _Picky.made == 1


def test_an_explicit_policy_overrides_the_agent_hook() -> None:
    """--accept-challenges all accepts bob although the bot's own hook would say no."""
    assert ChallengePolicy.of("all", factory_for(_Picky)).answer(_offer("bob/b")).accept


def test_bots_without_the_hook_accept_everyone() -> None:
    """An Agent that does not override the hook, and a course-style bot, accept every offer
    without the hook being consulted (course bots unchanged)."""

    class Course:
        def __init__(self, color: Any, **referee: Any) -> None:
            raise AssertionError("a course bot is not built to answer challenges")

    for factory in (factory_for(RandomBot), factory_for(Course)):
        policy = ChallengePolicy.of(None, factory)
        assert policy.decide is None and policy.answer(_offer("carl/x")).accept
