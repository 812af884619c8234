"""Live moves across processes: whoever plays a game ``NOTIFY``s each move, hubs ``LISTEN``.

A worker plays a game far from the server that spectators are connected to (gRPC
``WatchGame``, the web front's SSE stream), and a web front may run in a process of its own
(``referee web``) far from the server's own games. Each event of a game (start, every move,
end) goes out on the PostgreSQL channel :data:`CHANNEL` as one small JSON payload (a Tetress
position is ~135 characters, far below ``NOTIFY``'s 8000-byte limit); each
:class:`LiveListener` (the server's, ``referee web``'s) feeds them to its
:class:`~referee.live.hub.LiveHub`, which both spectator front ends already follow. A worker
sends through :class:`NotifyBroadcast`; the server relays its own hub's games
(:class:`NotifyRelay`), each payload tagged with the server's origin so that its own listener
skips them (its hub has them already). ``NOTIFY`` keeps the order of one session's messages,
and one process sends all its events on one connection, so moves arrive in order.

Nothing here is needed for the result: a lost notification costs a spectator a move on the
screen (the stored record is complete), never the game.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import psycopg

from engine.adjudication.verdicts import Verdict, parse_ending
from referee.live.hub import LiveEnd, LiveGame, LiveHub, LiveMove
from referee.telemetry.logs import get_logger
from referee.workers.queue import conninfo

if TYPE_CHECKING:
    from engine.game import Game, State
    from referee.match.clock import SeatClock
    from referee.match.runner import GameReport, MoveLog
    from referee.play.store import Filing
    from referee.storage import BotVersionInfo, GameSummary

log = get_logger("referee.workers.live")

CHANNEL = "arena_live"
#: Events waiting to be sent; past this a spectator loses moves rather than a worker memory.
BACKLOG = 10_000
RECONNECT_S = 1.0
#: A live game with no event for this long is taken as cut off (its worker died).
SILENT_S = 60.0


def new_origin() -> str:
    """A process's tag on the events it sends, unique among the processes of a database."""
    return secrets.token_hex(8)


class LivePublisher:
    """Sends live events of a process's games, in order, on one connection of its own.

    ``origin`` tags every event (a listener of the same process skips those: see
    :class:`LiveListener`); a worker, which listens to nothing, sends none.
    """

    def __init__(self, url: str, origin: str = "") -> None:
        self.conninfo = conninfo(url)
        self.origin = origin
        self._queue: asyncio.Queue[str] = asyncio.Queue(BACKLOG)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._send_all(), name="live-publisher")

    async def close(self, grace_s: float = 2.0) -> None:
        """Send what is queued (for up to ``grace_s``), then stop."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace_s):
                while not self._queue.empty():
                    await asyncio.sleep(0.02)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def send(self, kind: str, uid: str, **data: Any) -> None:
        if self.origin:
            data["origin"] = self.origin
        try:
            self._queue.put_nowait(json.dumps({"kind": kind, "uid": uid, **data}))
        except asyncio.QueueFull:
            log.warning("live_event_dropped", kind=kind, uid=uid)

    async def _send_all(self) -> None:
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self.conninfo, autocommit=True
                ) as conn:
                    while True:
                        payload = await self._queue.get()
                        await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))
            except psycopg.Error as exc:
                log.warning("live_publisher_reconnecting", reason=str(exc))
                await asyncio.sleep(RECONNECT_S)

    def start_game(
        self,
        uid: str,
        game: str,
        players: Sequence[str],
        seat_names: Sequence[str],
        position: str,
        tournament_id: int | None,
        mode: str = "",
    ) -> None:
        self.send(
            "start",
            uid,
            game=game,
            players=list(players),
            seat_names=list(seat_names),
            position=position,
            tournament_id=tournament_id,
            **({"mode": mode} if mode else {}),
        )

    def move(self, uid: str, move: LiveMove) -> None:
        self.send(
            "move",
            uid,
            ply=move.ply,
            seat=move.seat,
            action=move.action,
            time_s=move.time_s,
            position=move.position,
            clocks=list(move.clocks),
        )

    def end_game(self, uid: str, end: LiveEnd) -> None:
        self.send(
            "end",
            uid,
            result=end.result,
            verdict=str(end.verdict),
            termination=None if end.termination is None else str(end.termination),
            reason=end.reason,
            winner=end.winner_seat,
        )


class NotifyObserver:
    """The match runner's observer for one game on a worker: its moves go to ``NOTIFY``.

    The end is held back until the job has stored the result (:meth:`publish_end`), so a
    spectator never sees a result that is not stored (a worker that lost its game sends none).
    """

    def __init__(self, publisher: LivePublisher, uid: str) -> None:
        self.publisher = publisher
        self.uid = uid
        self.end: LiveEnd | None = None

    def on_move(self, state: State[Any], move: MoveLog, clocks: Sequence[SeatClock]) -> None:
        self.publisher.move(
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
        if end is not None:
            self.end = LiveEnd(end.result(), end.verdict, end.termination, end.reason, end.winner)

    def publish_end(self, stored: bool, why: str = "not played") -> None:
        """The game's end: its result once ``stored``, else an aborted end saying ``why``."""
        if stored and self.end is not None:
            self.publisher.end_game(self.uid, self.end)
        else:
            self.publisher.end_game(self.uid, LiveEnd("*", Verdict.ABORTED, None, why, None))


class NotifyBroadcast:
    """A worker's games for the server's spectators (:class:`referee.play.store.Broadcast`):
    each game's end goes out only once its row is written."""

    def __init__(self, publisher: LivePublisher) -> None:
        self.publisher = publisher
        self._observers: dict[str, NotifyObserver] = {}

    def begin(
        self, uid: str, game: Game[Any], seats: Sequence[BotVersionInfo], filing: Filing
    ) -> NotifyObserver:
        # Here, not at the top: ``referee web`` imports this module for its listener alone.
        from referee.play.store import live_opening

        self.publisher.start_game(uid, *live_opening(game, seats, filing))
        observer = self._observers[uid] = NotifyObserver(self.publisher, uid)
        return observer

    def end(self, uid: str, stored: GameSummary | None, why: str) -> None:
        observer = self._observers.pop(uid, None)
        if observer is not None:
            observer.publish_end(stored is not None, why)


class NotifyRelay:
    """The server's hub relay (:class:`referee.live.hub.LiveRelay`): the games this process
    plays itself go out on :data:`CHANNEL` too, for a web front in another process."""

    def __init__(self, publisher: LivePublisher) -> None:
        self.publisher = publisher

    def started(self, live: LiveGame) -> None:
        self.publisher.start_game(
            live.uid,
            live.game,
            live.players,
            live.seat_names,
            live.initial_position,
            live.tournament_id,
            live.mode,
        )

    def moved(self, uid: str, move: LiveMove) -> None:
        self.publisher.move(uid, move)

    def ended(self, uid: str, end: LiveEnd) -> None:
        self.publisher.end_game(uid, end)


class LiveListener:
    """Feeds ``hub`` with the games other processes play (run :meth:`run` as a task; it
    reconnects): events tagged ``own_origin`` are this process's own, already in ``hub``.

    A game silent for ``silent_s`` (the process playing it died: no end will come) is ended in
    the hub as aborted, so its spectators are not left waiting; a worker's game is played again
    and appears anew under its new game id.
    """

    def __init__(
        self, url: str, hub: LiveHub, silent_s: float = SILENT_S, own_origin: str = ""
    ) -> None:
        self.conninfo = conninfo(url)
        self.hub = hub
        self.silent_s = silent_s
        self.own_origin = own_origin
        #: Set once ``LISTEN`` is in place (events sent before are not seen).
        self.listening = asyncio.Event()
        #: Game id -> when its last event came (games of workers still running).
        self.heard: dict[str, float] = {}

    async def run(self) -> None:
        sweeper = asyncio.create_task(self._sweep())
        try:
            await self._listen()
        finally:
            sweeper.cancel()

    async def _sweep(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(self.silent_s, 5.0))
            now = loop.time()
            for uid, last in list(self.heard.items()):
                if now - last > self.silent_s:
                    del self.heard[uid]
                    why = f"the process playing it went silent for {self.silent_s:g} s"
                    self.hub.finish(uid, LiveEnd("*", Verdict.ABORTED, None, why, None))

    async def _listen(self) -> None:
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self.conninfo, autocommit=True
                ) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    self.listening.set()
                    async for note in conn.notifies():
                        self.apply(note.payload)
            except psycopg.Error as exc:
                self.listening.clear()
                log.warning("live_listener_reconnecting", reason=str(exc))
                await asyncio.sleep(RECONNECT_S)

    def apply(self, payload: str) -> None:
        """One event into the hub; a malformed one is logged and skipped."""
        try:
            event = json.loads(payload)
            if self.own_origin and event.get("origin") == self.own_origin:
                return
            kind, uid = event["kind"], str(event["uid"])
            if kind == "end":
                self.heard.pop(uid, None)
            else:
                self.heard[uid] = asyncio.get_running_loop().time()
            if kind == "start":
                self.hub.start(
                    uid,
                    event["game"],
                    event["players"],
                    event["seat_names"],
                    event["position"],
                    event.get("tournament_id"),
                    str(event.get("mode", "")),
                    remote=True,
                )
            elif kind == "move":
                clocks = tuple(None if c is None else float(c) for c in event.get("clocks", ()))
                self.hub.move(
                    uid,
                    LiveMove(
                        int(event["ply"]),
                        int(event["seat"]),
                        str(event["action"]),
                        float(event["time_s"]),
                        str(event["position"]),
                        clocks,
                    ),
                )
            elif kind == "end":
                termination = event.get("termination")
                self.hub.finish(
                    uid,
                    LiveEnd(
                        str(event["result"]),
                        Verdict(event["verdict"]),
                        parse_ending(termination) if termination else None,
                        str(event.get("reason", "")),
                        event.get("winner"),
                    ),
                )
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("live_event_malformed", reason=str(exc))
