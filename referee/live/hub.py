"""Games being played right now, for spectators: every move as it is accepted.

The runner gives each game a :class:`LiveObserver` (the match runner's observer hook); the
Arena service's ``WatchGame`` follows a :class:`LiveGame`: the moves so far, then each new
move, then the end. Everything runs on the event loop of the runner, so no locks are needed.

A hub may also have a :class:`LiveRelay`: the games this process plays itself then go out to
other processes' spectators too (on PostgreSQL, ``NOTIFY``: :mod:`referee.workers.live`), while
games another process plays (``remote=True``, fed by a listener) are never sent back out. The
relay gets a game's start and moves as they come, but its end only once the site playing it
says the end may go out (:meth:`LiveHub.release`: for a stored game, once its row is written),
whereas this hub's own spectators see the end as soon as the runner has it.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from engine.game import State
    from referee.match.clock import SeatClock
    from referee.match.runner import GameReport, MoveLog

from engine.adjudication.verdicts import Ending, Verdict

#: Finished games kept in memory so that a spectator arriving just after the end still gets
#: the whole game from here (older ones come from storage).
KEEP_FINISHED = 64


@dataclass(frozen=True, slots=True)
class LiveMove:
    ply: int
    seat: int
    action: str
    time_s: float
    position: str
    #: Each seat's time left after this move (``None``: no game clock).
    clocks: tuple[float | None, ...] = ()


@dataclass(frozen=True, slots=True)
class LiveEnd:
    result: str
    verdict: Verdict
    termination: Ending | None
    reason: str
    winner_seat: int | None


@dataclass(eq=False)
class LiveGame:
    uid: str
    game: str
    players: tuple[str, str]
    seat_names: tuple[str, str]
    initial_position: str
    tournament_id: int | None = None
    moves: list[LiveMove] = field(default_factory=list)
    end: LiveEnd | None = None
    #: ``tournament``, ``ladder`` (casual, rated) or ``casual``.
    mode: str = ""

    def __post_init__(self) -> None:
        #: One future per follower waiting for the next change.
        self._waiters: list[asyncio.Future[None]] = []

    def _notify(self) -> None:
        """Wake every follower. Called for every move of every game, followed or not, so it
        costs nothing when no one follows (no task, no lock)."""
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def follow(self) -> AsyncIterator[LiveMove | LiveEnd]:
        """Every move so far, then each new one as it comes, then the end."""
        sent = 0
        while True:
            while sent < len(self.moves):
                yield self.moves[sent]
                sent += 1
            if self.end is not None:
                yield self.end
                return
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:  # cancelled: the follower is gone
                    self._waiters.remove(waiter)


class LiveRelay(Protocol):
    """Where a hub sends the games its own process plays, for other processes' spectators.
    Each call must return at once (queue, never wait): the runner's moves go through it."""

    def started(self, live: LiveGame) -> None: ...

    def moved(self, uid: str, move: LiveMove) -> None: ...

    def ended(self, uid: str, end: LiveEnd) -> None: ...


class LiveHub:
    """The games in progress (and the last few finished), by game id."""

    def __init__(self) -> None:
        self._games: dict[str, LiveGame] = {}
        self._finished: OrderedDict[str, LiveGame] = OrderedDict()
        #: Where this process's own games go too (``None``: to this hub's spectators only).
        self.relay: LiveRelay | None = None
        #: Own games given to the relay whose end has not gone out yet (:meth:`release`).
        self._relayed: dict[str, tuple[LiveRelay, LiveGame]] = {}

    def start(
        self,
        uid: str,
        game: str,
        players: Sequence[str],
        seat_names: Sequence[str],
        initial_position: str,
        tournament_id: int | None = None,
        mode: str = "",
        *,
        remote: bool = False,
    ) -> LiveGame:
        """A game begins; ``remote``: another process plays it (it is not relayed)."""
        live = LiveGame(
            uid,
            game,
            (players[0], players[1]),
            (seat_names[0], seat_names[1]),
            initial_position,
            tournament_id,
            mode=mode or ("tournament" if tournament_id is not None else "casual"),
        )
        self._games[uid] = live
        if self.relay is not None and not remote:
            self._relayed[uid] = (self.relay, live)
            self.relay.started(live)
        return live

    def get(self, uid: str) -> LiveGame | None:
        return self._games.get(uid) or self._finished.get(uid)

    def running(self) -> list[LiveGame]:
        return list(self._games.values())

    def move(self, uid: str, move: LiveMove) -> None:
        live = self._games.get(uid)
        if live is not None:
            live.moves.append(move)
            live._notify()
            relayed = self._relayed.get(uid)
            if relayed is not None and relayed[1] is live:
                relayed[0].moved(uid, move)

    def finish(self, uid: str, end: LiveEnd) -> None:
        live = self._games.pop(uid, None)
        if live is None:
            return
        live.end = end
        self._finished[uid] = live
        while len(self._finished) > KEEP_FINISHED:
            self._finished.popitem(last=False)
        live._notify()

    def release(self, uid: str, instead: LiveEnd | None = None) -> None:
        """An own game's end may go out to the relay: the end it finished with, or
        ``instead`` (the game was not stored: an aborted end saying why). Nothing for a game
        not relayed, or already released."""
        relay, live = self._relayed.pop(uid, (None, None))
        if relay is None or live is None:
            return
        end = instead or live.end
        relay.ended(uid, end or LiveEnd("*", Verdict.ABORTED, None, "not played", None))


class LiveObserver:
    """The match runner's observer for one game: forwards its moves to the hub."""

    def __init__(self, hub: LiveHub, uid: str) -> None:
        self.hub = hub
        self.uid = uid

    def on_move(self, state: State[Any], move: MoveLog, clocks: Sequence[SeatClock]) -> None:
        self.hub.move(
            self.uid,
            LiveMove(
                move.ply,
                move.seat,
                move.action,
                move.time_s,
                state.to_string(),
                tuple(getattr(c, "remaining", None) for c in clocks or ()),
            ),
        )

    def on_end(self, state: State[Any], report: GameReport) -> None:
        end = report.end
        if end is None:  # the runner calls on_end once the game has ended
            return
        self.hub.finish(
            self.uid,
            LiveEnd(end.result(), end.verdict, end.termination, end.reason, end.winner),
        )
