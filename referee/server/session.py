"""One bot session: the long-lived ``Play`` stream of one bot, and the routing of its messages.

Each stream has exactly one reader task (:meth:`BotSession.read_loop`). It never waits on
anything but the stream, stamps every message with its arrival time (the referee's clock
stops there, so the referee's own scheduling is never charged to the bot) and hands it to the
game it belongs to through that game's ``asyncio.Queue``. Deadlines are timeouts on those
queues, never on a raw stream read: cancelling a read mid-flight kills the stream.

Writes come from the match runners (and the reader, for error replies) and are serialised by a
lock, since a stream takes one write at a time.

A session outlives its stream: when the stream drops while the session plays games (and the
server allows resuming), the session is *suspended*. Its games keep running (their clocks too)
until the bot comes back with ``Hello.resume_session_id`` on a new stream (:meth:`resume`),
or the window closes. Limits on what a bot may send: messages per second (a flood ends its
games with a protocol error and closes the session), and message size (see ``server.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import grpc
from grpc.aio import EOF

from client_sdk.proto import referee_pb2 as pb
from referee.match.seat import EventKind, SeatEvent, SessionClosed
from referee.server import bounds
from referee.server.flood import FloodGate
from referee.server.identity import Identity as Identity
from referee.telemetry.logs import get_logger

log = get_logger("referee.server.session")

#: Non-fatal protocol mistakes (unknown game, wrong ply, ...) a session may make before it is
#: closed for flooding.
MAX_STRIKES = 100
#: Flood control (:mod:`.flood`). Every message the referee sends earns the bot one reply (so
#: a fast bot answering every request is never limited, however fast it plays); beyond those, a
#: bot may send ``RATE_PER_GAME`` messages per second per game it may play at once (never fewer
#: than ``MIN_RATE``), with a burst of twice that.
RATE_PER_GAME = 100.0
MIN_RATE = 200.0


@dataclass(frozen=True, slots=True)
class Malformed:
    """A message that could not be decoded (what the tolerant deserializer returns)."""

    size: int
    error: str
    #: Rejected for its size (``error`` says the limit), not for its content.
    oversized: bool = False


#: The Play stream's context: decoded messages (or :class:`Malformed`) in, encoded bytes out.
PlayContext: TypeAlias = "grpc.aio.ServicerContext[pb.BotMessage | Malformed, bytes]"


class SessionAway(SessionClosed):
    """Writing to a suspended session (its stream dropped; it may still resume)."""


@dataclass(slots=True)
class _GameRoute:
    seat: int
    inbox: asyncio.Queue[SeatEvent]


@dataclass(eq=False)
class BotSession:
    """The referee's side of one bot's stream."""

    hello: pb.Hello
    identity: Identity
    games: frozenset[str]
    context: PlayContext
    session_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    connected_at: float = field(default_factory=time.time)
    #: The games casual pairing may give this bot: those it asked for, else the server's
    #: default game (``None``: every game it plays).
    casual_games: frozenset[str] | None = None

    def __post_init__(self) -> None:
        self._write_lock = asyncio.Lock()
        self._routes: dict[str, _GameRoute] = {}
        self.closed = asyncio.Event()
        self.close_reason = ""
        self.draining = False
        self.strikes = 0
        self.max_games = max(1, self.hello.max_games)
        #: Seconds a dropped session may take to come back (0: a drop ends it at once).
        self.resume_window = 0.0
        #: The stream currently attached: its number, and an event set when it ends.
        self.link = 0
        self.link_ended = asyncio.Event()
        self.suspended = False
        self.suspend_reason = ""
        self.resumes = 0
        self._flood = FloodGate(max(MIN_RATE, RATE_PER_GAME * self.max_games), time.monotonic())
        #: Answers to challenge offers (read by :mod:`referee.hosting.challenges`).
        self.answers: asyncio.Queue[pb.ChallengeAnswer] = asyncio.Queue(maxsize=8)

    # -- identity and capacity ----------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.identity.name

    @property
    def version(self) -> str:
        return self.hello.bot_version

    @property
    def active_games(self) -> int:
        return len(self._routes)

    def is_free(self) -> bool:
        """Whether the referee may start another game with this session now."""
        return (
            not self.closed.is_set()
            and not self.suspended
            and not self.draining
            and self.active_games < self.max_games
        )

    @property
    def resumable(self) -> bool:
        """Suspended (its stream dropped) and still allowed to come back."""
        return self.suspended and not self.closed.is_set()

    def plays(self, game: str) -> bool:
        return not self.games or game in self.games

    @property
    def channel(self) -> str:
        """The named channel the bot joined (``""``: the open pool)."""
        return self.hello.channel.strip().lower()

    def pairs_casually(self, game: str) -> bool:
        """Whether casual pairing may give this bot a game of ``game``."""
        if self.casual_games is None:
            return self.plays(game)
        return game in self.casual_games

    # -- games ---------------------------------------------------------------------------------

    def attach(self, game_id: str, seat: int, inbox: asyncio.Queue[SeatEvent]) -> None:
        """Route this session's messages for ``game_id`` to ``inbox``, tagged with ``seat``."""
        if game_id in self._routes:
            raise ValueError(f"session {self.session_id} already plays game {game_id}")
        self._routes[game_id] = _GameRoute(seat, inbox)
        if self.closed.is_set():
            inbox.put_nowait(
                SeatEvent(seat, EventKind.DISCONNECT, time.monotonic(), detail=self.close_reason)
            )

    def detach(self, game_id: str) -> None:
        self._routes.pop(game_id, None)

    # -- writing -------------------------------------------------------------------------------

    async def send(self, message: pb.RefereeMessage) -> float:
        """Write one message; returns the moment it was handed to the transport.

        Raises :class:`SessionClosed` if the stream is gone. The message is serialised before
        the moment is taken, and the moment is taken before the write is awaited: the write's
        completion is reported late (after the answer has sometimes arrived), so it cannot be
        the start of a bot's clock.
        """
        return await self.send_bytes(message.SerializeToString())

    async def send_bytes(self, data: bytes) -> float:
        """Write one already encoded ``RefereeMessage``; see :meth:`send`."""
        if self.closed.is_set():
            raise SessionClosed(self.close_reason)
        if self.suspended:
            raise SessionAway(self.suspend_reason)
        link = self.link
        context = self.context
        async with self._write_lock:
            sent = time.monotonic()
            self._flood.sent()
            try:
                await context.write(data)
            except Exception as exc:  # grpc raises several types once a stream is gone
                reason = f"write failed: {type(exc).__name__}"
                if link == self.link:
                    self.link_lost(reason)
                if self.closed.is_set():
                    raise SessionClosed(self.close_reason) from exc
                raise SessionAway(reason) from exc
        return sent

    async def flush(self, timeout: float = 5.0) -> None:
        """Wait until a write in progress has finished (or ``timeout`` passed)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout), self._write_lock:
                pass

    async def send_bytes_quietly(self, data: bytes) -> bool:
        """:meth:`send_bytes`, ignoring a closed stream; returns whether it was written."""
        try:
            await self.send_bytes(data)
        except SessionClosed:
            return False
        return True

    async def send_quietly(self, message: pb.RefereeMessage) -> bool:
        """Write one message, ignoring a closed stream; returns whether it was written."""
        try:
            await self.send(message)
        except SessionClosed:
            return False
        return True

    async def error(self, code: int, message: str, game_id: str = "", fatal: bool = False) -> None:
        """Tell the bot about an error (and close the session when ``fatal``).

        Best effort: a bot that does not read its stream must not hold the caller up.
        """
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(1.0):
                await self.send_quietly(
                    pb.RefereeMessage(
                        error=pb.Error(code=code, message=message, game_id=game_id, fatal=fatal)  # type: ignore[arg-type]
                    )
                )
        if fatal:
            self.close(message)

    async def goodbye(self, reason: str) -> None:
        """Tell the bot the session is over and end the stream."""
        await self.send_quietly(pb.RefereeMessage(goodbye=pb.Goodbye(reason=reason)))
        await self.flush()
        self.close(reason)

    def close(self, reason: str) -> None:
        """End the session: the handler returns and the stream closes."""
        self._mark_closed(reason)

    def _mark_closed(self, reason: str) -> None:
        if self.closed.is_set():
            return
        self.close_reason = reason
        self.closed.set()
        self.link_ended.set()
        now = time.monotonic()
        for route in self._routes.values():
            route.inbox.put_nowait(SeatEvent(route.seat, EventKind.DISCONNECT, now, detail=reason))

    def link_lost(self, reason: str) -> None:
        """The current stream is gone: suspend when games may resume, else close."""
        if self.closed.is_set() or self.suspended:
            return
        if not self._routes or self.resume_window <= 0 or self.draining:
            self._mark_closed(reason)
            return
        self.suspended = True
        self.suspend_reason = reason
        self.link_ended.set()
        log.info("session_suspended", session=self.session_id, reason=reason)
        now = time.monotonic()
        for route in self._routes.values():
            route.inbox.put_nowait(SeatEvent(route.seat, EventKind.DISCONNECT, now, detail=reason))

    def resume(self, context: PlayContext) -> int:
        """Attach a new stream (the bot came back); returns the new link's number.

        The old stream, if the referee still thought it alive, is superseded: its handler
        returns. Call :meth:`announce_resumed` once the Welcome is written on the new stream.
        """
        if self.closed.is_set():
            raise SessionClosed(self.close_reason)
        self.link_ended.set()  # the old link's handler (if any) lets go
        self.link += 1
        self.link_ended = asyncio.Event()
        self.context = context
        self._write_lock = asyncio.Lock()
        self.suspended = False
        self.suspend_reason = ""
        self.resumes += 1
        self.strikes = 0
        return self.link

    def announce_resumed(self) -> None:
        """Tell every running game that the seat is back."""
        now = time.monotonic()
        for route in self._routes.values():
            route.inbox.put_nowait(SeatEvent(route.seat, EventKind.RESUMED, now))

    # -- reading -------------------------------------------------------------------------------

    # ``read`` returns Any: gRPC types it as object (its EOF marker) or the request type.
    async def read_loop(self, read: Callable[[], Awaitable[Any]], link: int = 0) -> None:
        """The session's one reader for stream number ``link``: route every message until the
        stream ends (or is superseded by a resumed one).

        ``read`` is the stream's ``context.read`` (it returns ``grpc.aio.EOF`` at the end):
        awaited directly, it costs two coroutine layers less per message than the request
        iterator that wraps it.
        """
        reason = "the bot closed its stream"
        try:
            while True:
                message = await read()
                if message is EOF:
                    break
                received = time.monotonic()
                if link != self.link:
                    return
                if not self._flood.admit(received):
                    await self._flooded()
                    return
                # The hot path (a move for a running game) stays free of awaits.
                if not isinstance(message, Malformed) and message.WhichOneof("kind") == "move":
                    route = self._routes.get(message.move.game_id)
                    if route is not None:
                        route.inbox.put_nowait(
                            SeatEvent(route.seat, EventKind.MOVE, received, move=message.move)
                        )
                        # Let the game's task (woken just now) judge the move and send the next
                        # request before this stream's next read is armed: arming a read is a
                        # gRPC batch of its own, and the next message cannot come before the
                        # next request has gone out anyway.
                        await asyncio.sleep(0)
                        continue
                await self._dispatch(message, received)
                if self.closed.is_set():
                    return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the stream broke (reset, cancelled by the peer, ...)
            reason = f"the connection was lost ({_describe_stream_error(exc)})"
        if link == self.link:
            self.link_lost(reason)

    async def _flooded(self) -> None:
        log.warning("session_flood", session=self.session_id)
        await self._violation(
            self._flood.sentence(), close=True, code=pb.ERROR_CODE_RESOURCE_EXHAUSTED
        )

    async def _dispatch(self, message: pb.BotMessage | Malformed, received: float) -> None:
        if isinstance(message, Malformed):
            if message.oversized:
                await self._violation(f"sent a message of {message.size} bytes ({message.error})")
            else:
                await self._violation(
                    f"sent a message that could not be decoded ({message.size} bytes)"
                )
            return
        kind = message.WhichOneof("kind")
        if kind == "move":
            move = message.move
            route = self._routes.get(move.game_id)
            if route is None:
                game = bounds.shown(move.game_id)
                await self._strike(pb.ERROR_CODE_UNKNOWN_GAME, f"no running game {game}")
                return
            route.inbox.put_nowait(SeatEvent(route.seat, EventKind.MOVE, received, move=move))
        elif kind == "error":
            err = message.error
            route = self._routes.get(err.game_id) if err.game_id else None
            if route is not None:
                route.inbox.put_nowait(
                    SeatEvent(
                        route.seat,
                        EventKind.BOT_ERROR,
                        received,
                        detail=bounds.clean_report(err.message) or bounds.code_name(err.code),
                    )
                )
            elif err.fatal:
                self.close(f"the bot gave up: {err.message}")
            else:
                log.info("bot_error", session=self.session_id, message=err.message[:500])
        elif kind == "goodbye":
            self.draining = True
            log.info("bot_goodbye", session=self.session_id, reason=message.goodbye.reason[:200])
            if not self._routes:
                self.close("the bot said goodbye")
        elif kind == "challenge_answer":
            with contextlib.suppress(asyncio.QueueFull):  # unasked answers are dropped
                self.answers.put_nowait(message.challenge_answer)
        elif kind == "hello":
            await self._violation("sent a second Hello")
        else:
            await self._violation("sent an empty message")

    async def _violation(
        self, what: str, *, close: bool = False, code: int = pb.ERROR_CODE_BAD_MESSAGE
    ) -> None:
        # A protocol violation ends every game the session plays; outside a game (or when
        # ``close``: the stream cannot be trusted any more) the session itself is closed.
        now = time.monotonic()
        routes = list(self._routes.values())
        for route in routes:
            route.inbox.put_nowait(SeatEvent(route.seat, EventKind.MALFORMED, now, detail=what))
        if close or not routes:
            # The error is best effort: a bot that does not read must not hold the reader up.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await self.send_quietly(
                        pb.RefereeMessage(
                            error=pb.Error(code=code, message=f"the bot {what}", fatal=True)  # type: ignore[arg-type]
                        )
                    )
            self.close(f"the bot {what}")

    async def _strike(self, code: int, message: str) -> None:
        self.strikes += 1
        if self.strikes > MAX_STRIKES:
            await self._violation(
                f"sent too many invalid messages (more than {MAX_STRIKES})",
                close=True,
                code=pb.ERROR_CODE_RESOURCE_EXHAUSTED,
            )
        else:
            await self.error(code, message)


def _describe_stream_error(exc: BaseException) -> str:
    code = getattr(exc, "code", None)
    if callable(code):
        with contextlib.suppress(Exception):
            return str(code()).removeprefix("StatusCode.")
    return type(exc).__name__


async def handshake_queue(
    read: Callable[[], Awaitable[Any]],
    queue: asyncio.Queue[pb.BotMessage | Malformed | None],
) -> None:
    """Feed the first message of a stream into ``queue`` (``None`` if the stream ended)."""
    try:
        message = await read()
    except Exception:  # the stream broke before saying anything
        message = EOF
    queue.put_nowait(None if message is EOF else message)
