"""The sentences of SKIPPED notices: which tournament game, and what became of it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from engine.adjudication import verdicts
from engine.adjudication.verdicts import Verdict
from referee.hosting.skipped import game_words, outcome_words


def _report(end: Any) -> Any:
    return SimpleNamespace(end=end)


def test_game_words_name_round_board_and_game() -> None:
    """A tournament game's labels become its name; labels it lacks are left out."""
    labels = {"tournament": "week3", "tournamentRound": "2", "board": "1", "leg": "4"}
    assert game_words(labels) == "tournament 'week3' round 2, board 1, game 4"
    assert game_words({"tournament": "cup", "leg": "1"}) == "tournament 'cup', game 1"


def test_outcome_words_say_loss_or_replay() -> None:
    """A forfeit by the missing seat counts as its loss; an abort is not scored and replayed."""
    lost = _report(verdicts.fault(Verdict.DISCONNECT, 0, "RED did not connect in time"))
    assert outcome_words(lost, 0, "a@1") == "it counts as a loss for a@1 (disconnect)"
    replayed = _report(verdicts.aborted("neither bot connected"))
    assert outcome_words(replayed, 1, "a@1") == (
        "it was not scored (neither bot was there) and is played again later"
    )
