"""Playing one game and storing it: the one path of every site that keeps a game (a
tournament's runner, a worker's tournament and ladder jobs, the server's ladder, grading,
here or on the workers; casual, validation and ``referee sprt --db`` games, played elsewhere,
take its storing half, :func:`store_game`).

What "stored" means, for every site:

* A game is **stored** once its row is written (:func:`store_game` returned its summary).
  Every game the referee brought to an end is stored, whatever its verdict:

  - a result (a win or a draw, by the rules or the turn limit);
  - a **forfeit** (a bot broke a rule: time, memory, an illegal move, a crash, a protocol
    error, a drop): a loss for it; under a tournament's ``void`` forfeit policy the row is
    ``voided`` (left out of standings and ratings) but still holds its slot, so the game is
    not played again (the one place that decides it is
    :meth:`referee.storage.games.GamesRepository.record_game`);
  - an **aborted** game (nobody's fault: a bot never connected, the referee stopped): kept
    for its record, never rated, and holding no tournament slot, so a tournament plays it
    again (:attr:`StoredGame.has_result` is false) A game whose uid is its slot (grading's:
    :func:`play_and_store` with ``keep_aborted=False``) is the exception: an aborted one is
    not stored (:class:`AbortedNotKept`), so the same uid can be played again.

* A game that could not be stored (storage refused it, the job lost its lease, the play
  itself failed) is not stored; its spectators are told it was aborted, with why.

Spectators see a stored game's own end (an aborted game's end says why it was aborted); the
server's live hub shows the end as soon as the runner has it, a ``NOTIFY`` to other processes
(a worker's, or the server's hub relay) only once the row is written (:class:`Broadcast`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy.orm import Session

from engine.adjudication.verdicts import Verdict
from engine.game import Game
from referee.errors import RefereeError
from referee.live.hub import LiveEnd, LiveHub, LiveObserver
from referee.match.report import GameReport, Observer
from referee.play.game import GamePlayer, Played
from referee.play.gamerows import finished_game
from referee.storage import BotVersionInfo, GameSummary, Repository
from referee.storage.enums import GameKind

#: A check run inside the storing transaction (a worker's lease guard); it raises to refuse.
Guard = Callable[[Session], None]


@dataclass(frozen=True, slots=True)
class Filing:
    """Where a game is stored: its event and kind, and its tournament slot if it has one."""

    #: The record's ``Event`` tag: a tournament's name, ``ladder``, ``casual``, ``validation``.
    event: str
    kind: GameKind = GameKind.RATED
    tournament_id: int | None = None
    pairing_id: int | None = None
    game_index: int = 0
    #: Kept with its record but rated for no one (a casual win over a repeat no-show).
    voided: bool = False


@dataclass(frozen=True, slots=True)
class StoredGame:
    """A game played and stored: its stored summary and what was played."""

    summary: GameSummary
    played: Played

    @property
    def has_result(self) -> bool:
        """Whether the game ended with a result (a forfeit is one); ``False`` for an aborted
        game, which a tournament plays again."""
        return has_result(self.summary)


class ResultSignal:
    """Observer: calls ``on_result`` once when the game ends with a result, passing every
    event on to ``inner``."""

    def __init__(self, on_result: Callable[[], None], inner: Observer | None) -> None:
        self.on_result = on_result
        self.inner = inner

    def on_move(self, state: Any, move: Any, clocks: Any) -> None:
        if self.inner is not None:
            self.inner.on_move(state, move, clocks)

    def on_end(self, state: Any, report: GameReport) -> None:
        if self.inner is not None:
            self.inner.on_end(state, report)
        if report.end is not None and report.end.verdict is not Verdict.ABORTED:
            self.on_result()


def has_result(summary: GameSummary) -> bool:
    """Whether a stored game ended with a result rather than being aborted."""
    return summary.verdict is not Verdict.ABORTED


class Broadcast(Protocol):
    """Where a game's spectators follow it."""

    def begin(
        self, uid: str, game: Game[Any], seats: Sequence[BotVersionInfo], filing: Filing
    ) -> Observer:
        """Announce the game; the observer its runner feeds."""
        ...

    def end(self, uid: str, stored: GameSummary | None, why: str) -> None:
        """The game is over: ``stored`` is its summary, ``None`` when it was not stored
        (``why`` says why)."""
        ...


def live_opening(
    game: Game[Any], seats: Sequence[BotVersionInfo], filing: Filing
) -> tuple[str, list[str], tuple[str, str], str, int | None]:
    """What a game's spectators are told as it begins, after its uid: the game, the players
    (seat order), the seat names, the starting position and the tournament (if any)."""
    return (
        game.name,
        [v.label for v in seats],
        game.seat_names,
        game.new_state().to_string(),
        filing.tournament_id,
    )


class HubBroadcast:
    """The server's own live hub: the end is shown as soon as the runner has it (and goes to
    the hub's relay, if any, once the game is stored)."""

    def __init__(self, hub: LiveHub, mode: str = "") -> None:
        self.hub = hub
        self.mode = mode

    def begin(
        self, uid: str, game: Game[Any], seats: Sequence[BotVersionInfo], filing: Filing
    ) -> Observer:
        self.hub.start(uid, *live_opening(game, seats, filing), mode=self.mode)
        return LiveObserver(self.hub, uid)

    def end(self, uid: str, stored: GameSummary | None, why: str) -> None:
        # A game that never started (a bot did not connect) had no end from its runner.
        aborted = LiveEnd("*", Verdict.ABORTED, Verdict.ABORTED, why, None)
        self.hub.finish(uid, aborted)
        # Other processes' spectators (the hub's relay) get the end only now, its row written.
        self.hub.release(uid, None if stored is not None else aborted)


def report_time(text: str) -> datetime:
    """A report's ISO 8601 time (now when it has none)."""
    if not text:
        return datetime.now(UTC)
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def store_game(
    repo: Repository,
    report: GameReport,
    game: Game[Any],
    seats: Sequence[BotVersionInfo],
    filing: Filing,
    *,
    outputs: Sequence[str] = (),
    started: datetime | None = None,
    finished: datetime | None = None,
    uid: str | None = None,
    guard: Guard | None = None,
) -> GameSummary:
    """Store one refereed game (blocking: run it in a thread from async code); ``seats[i]``
    is the version in seat ``i``. The times and the game id default to the report's.
    Storage's errors
    (:class:`~referee.storage.DuplicateGameError` for a slot already held, ...) and the
    guard's pass through."""
    row = finished_game(
        report,
        game,
        seats,
        outputs=outputs,
        event=filing.event,
        started=started or report_time(report.started_at),
        finished=finished or report_time(report.finished_at),
        tournament_id=filing.tournament_id,
        pairing_id=filing.pairing_id,
        game_index=filing.game_index,
        uid=uid or report.game_id,
        voided=filing.voided,
    )
    if filing.kind is not GameKind.RATED:
        row = dataclasses.replace(row, kind=filing.kind)
    return repo.record_game(row, guard)


class AbortedNotKept(RefereeError):
    """A game played under ``keep_aborted=False`` (its uid is its slot) ended aborted, so it
    was not stored and the same uid can be played again; ``played`` is what was played."""

    def __init__(self, reason: str, played: Played) -> None:
        super().__init__(reason)
        self.reason = reason
        self.played = played


async def play_and_store(
    player: GamePlayer,
    repo: Repository,
    seats: Sequence[BotVersionInfo],
    filing: Filing,
    *,
    uid: str,
    labels: dict[str, str],
    opening: Sequence[str] = (),
    broadcast: Broadcast | None = None,
    guard: Guard | None = None,
    on_result: Callable[[], None] | None = None,
    keep_aborted: bool = True,
) -> StoredGame:
    """Play one game between ``seats`` (first seat first) under game id ``uid`` and store it
    as ``filing`` says (see the module docstring for what is stored). An error of the play or
    of storage passes through, after the spectators were told the game was not stored.
    ``on_result`` is called as soon as the game has ended with a result (not aborted), while
    its bots are still being stopped and before it is stored: what it frees may be reused.
    ``keep_aborted=False`` is for a game whose uid is its slot (grading's): an aborted one is
    not stored but raises :class:`AbortedNotKept`, so the same uid can be played again."""
    game = player.terms.game
    observer = broadcast.begin(uid, game, seats, filing) if broadcast is not None else None
    if on_result is not None:
        observer = ResultSignal(on_result, observer)
    stored: GameSummary | None = None
    why = "not played"
    try:
        started = datetime.now(UTC)
        played = await player.play(list(seats), uid, labels, observer, opening)
        finished = datetime.now(UTC)
        end = played.report.end
        if not keep_aborted and (end is None or end.aborted):
            reason = end.reason if end is not None else "aborted"
            why = f"{reason} (not stored: played again)"
            raise AbortedNotKept(reason, played)
        why = "not stored"
        stored = await asyncio.to_thread(
            store_game,
            repo,
            played.report,
            game,
            seats,
            filing,
            outputs=played.outputs,
            started=started,
            finished=finished,
            uid=uid,
            guard=guard,
        )
        why = stored.reason
    finally:
        if broadcast is not None:
            broadcast.end(uid, stored, why)
    return StoredGame(stored, played)
