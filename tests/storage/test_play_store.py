"""The one rule for what a played game leaves in storage (referee.play.store), on both backends:
an aborted game is stored for its record but holds no slot, a forfeit holds its slot (voided
under a "void" policy), a game storage refuses is told to spectators as not stored."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest
from sqlalchemy.orm import Session

from engine.adjudication.verdicts import Verdict, aborted, fault
from engine.game import Game
from engine.registry import load_game
from referee.match.clock import TimeControl
from referee.match.report import GameReport, Observer, SeatReport, unplayed_report
from referee.play.game import GamePlayer, GameTerms, Played
from referee.play.store import (
    AbortedNotKept,
    Filing,
    StoredGame,
    play_and_store,
    store_game,
)
from referee.storage import (
    BotVersionInfo,
    DuplicateGameError,
    ForfeitPolicy,
    GameSummary,
    Repository,
    TournamentFormat,
    TournamentSettings,
)
from referee.storage.enums import GameKind


def _slot(repo: Repository, seats: list[int], policy: ForfeitPolicy) -> Filing:
    t = repo.create_tournament(
        TournamentSettings(
            name=f"rr-{policy}",
            format=TournamentFormat.ROUND_ROBIN,
            game="tetress",
            forfeit_policy=policy,
        ),
        seats[:2],
    )
    [p] = repo.add_pairings(t.id, 1, [(seats[0], seats[1])])
    return Filing(t.name, tournament_id=t.id, pairing_id=p.id, game_index=0)


def _report(game: Game[Any], seats: Sequence[BotVersionInfo], end: Any, uid: str) -> GameReport:
    return unplayed_report(game, end, [SeatReport(v.label, v.version) for v in seats], game_id=uid)


def _seats(repo: Repository, versions: list[int]) -> list[BotVersionInfo]:
    return [repo.get_bot_version(v) for v in versions[:2]]


def test_an_aborted_game_is_stored_but_holds_no_slot(repo: Repository, versions: list[int]) -> None:
    """An aborted tournament game is kept for its record, has no result and leaves its slot
    free, so the same slot then takes the replayed game."""
    game = load_game("tetress")
    seats = _seats(repo, versions)
    filing = _slot(repo, versions, ForfeitPolicy.LOSS)
    report = _report(game, seats, aborted("alpha did not connect"), "aborted-1")
    summary = store_game(repo, report, game, seats, filing)
    assert summary.verdict is Verdict.ABORTED and not summary.counted
    assert repo.get_game("aborted-1").summary.reason == "alpha did not connect"
    replay = _report(game, seats, fault(Verdict.TIME, 0, "alpha ran out of time"), "replay-1")
    assert store_game(repo, replay, game, seats, filing).counted


def test_a_forfeit_under_a_void_policy_is_stored_voided_and_holds_its_slot(
    repo: Repository, versions: list[int]
) -> None:
    """A forfeit has a result: under a "void" forfeit policy it is stored voided (out of the
    ratings) yet holds its slot, so the slot refuses a second game."""
    game = load_game("tetress")
    seats = _seats(repo, versions)
    filing = _slot(repo, versions, ForfeitPolicy.VOID)
    report = _report(game, seats, fault(Verdict.ILLEGAL_MOVE, 1, "beta moved illegally"), "f-1")
    summary = store_game(repo, report, game, seats, filing)
    assert summary.counted and summary.voided and summary.winner_seat == 0
    [result] = repo.game_results(tournament_id=filing.tournament_id)
    assert result.forfeit and result.void
    again = _report(game, seats, fault(Verdict.TIME, 0, "alpha ran out of time"), "f-2")
    with pytest.raises(DuplicateGameError):
        store_game(repo, again, game, seats, filing)


def test_a_validation_filing_keeps_its_kind(repo: Repository, versions: list[int]) -> None:
    """A game filed as a validation game is stored with that kind (never rated)."""
    game = load_game("tetress")
    seats = _seats(repo, versions)
    report = _report(game, seats, fault(Verdict.TIME, 1, "beta ran out of time"), "v-1")
    summary = store_game(repo, report, game, seats, Filing("validation", GameKind.VALIDATION))
    assert summary.kind is GameKind.VALIDATION
    assert repo.game_results() == []


class _Unplayed(GamePlayer):
    """A player whose seats never connect: every game ends aborted before its first move, as
    the real player reports a game whose remote bots were not in the lobby."""

    async def play(
        self,
        seats: Sequence[BotVersionInfo],
        uid: str,
        labels: dict[str, str],
        observer: Observer | None,
        opening: Sequence[str] = (),
    ) -> Played:
        end = aborted("no seat connected")
        return Played(_report(self.terms.game, seats, end, uid), ["", ""], absent=[0, 1])


class _Spectators:
    def __init__(self) -> None:
        self.ends: list[tuple[str, GameSummary | None, str]] = []

    def begin(
        self, uid: str, game: Game[Any], seats: Sequence[BotVersionInfo], filing: Filing
    ) -> None:
        return None

    def end(self, uid: str, stored: GameSummary | None, why: str) -> None:
        self.ends.append((uid, stored, why))


def _player() -> _Unplayed:
    return _Unplayed(GameTerms(load_game("tetress"), TimeControl(), None, 5.0, 5.0))


def test_play_and_store_stores_an_aborted_game_and_says_so(
    repo: Repository, versions: list[int]
) -> None:
    """play_and_store writes an aborted game's row and tells spectators it was stored, with
    the game's own reason; the result says it has none."""
    seats = _seats(repo, versions)
    spectators = _Spectators()
    stored = asyncio.run(
        play_and_store(
            _player(), repo, seats, Filing("ladder"), uid="p-1", labels={}, broadcast=spectators
        )
    )
    assert isinstance(stored, StoredGame) and not stored.has_result
    assert repo.get_game("p-1").summary.verdict is Verdict.ABORTED
    [(uid, summary, why)] = spectators.ends
    assert uid == "p-1" and summary is not None and why == "no seat connected"


def test_a_game_kept_under_its_slot_uid_stores_no_aborted_game(
    repo: Repository, versions: list[int]
) -> None:
    """play_and_store with keep_aborted=False (grading's games, whose uid is their slot)
    stores no aborted game, so the uid stays free, and tells spectators why it was not
    stored."""
    seats = _seats(repo, versions)
    spectators = _Spectators()
    unkept = play_and_store(
        _player(),
        repo,
        seats,
        Filing("grade"),
        uid="g-1",
        labels={},
        broadcast=spectators,
        keep_aborted=False,
    )
    with pytest.raises(AbortedNotKept, match="no seat connected"):
        asyncio.run(unkept)
    assert not any(g.uid == "g-1" for g in repo.list_games())
    assert spectators.ends == [("g-1", None, "no seat connected (not stored: played again)")]


def test_a_game_storage_refuses_is_told_as_not_stored(
    repo: Repository, versions: list[int]
) -> None:
    """When the storing transaction's guard refuses (a worker lost its lease), the error
    passes through, nothing is stored, and spectators hear the game was not stored."""
    seats = _seats(repo, versions)
    spectators = _Spectators()

    def lost_lease(session: Session) -> None:
        raise RuntimeError("lease lost")

    refused = play_and_store(
        _player(),
        repo,
        seats,
        Filing("ladder"),
        uid="p-2",
        labels={},
        broadcast=spectators,
        guard=lost_lease,
    )
    with pytest.raises(RuntimeError, match="lease lost"):
        asyncio.run(refused)
    assert spectators.ends == [("p-2", None, "not stored")]
    assert not any(g.uid == "p-2" for g in repo.list_games())


def test_the_store_filing_is_a_value() -> None:
    """A filing is an immutable value: sites share one without changing it by mistake."""
    filing = Filing("casual")
    with pytest.raises(dataclasses.FrozenInstanceError):
        filing.event = "other"  # type: ignore[misc]
