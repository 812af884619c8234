"""The ``grpc.aio`` referee server: the ``Play`` stream, health checking and reflection.

The server only handles sessions: it authenticates each bot, keeps it in the :class:`Lobby`
and routes its messages. Who plays whom is decided elsewhere (``referee match``, the
matchmaker of ``referee serve``, tournaments), by taking sessions from the lobby and handing
them to a :class:`~referee.match.runner.MatchRunner`.
"""

from __future__ import annotations

import asyncio
import shutil
import uuid
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Protocol

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from client_sdk.proto import referee_pb2 as pb
from engine.registry import game_names
from referee.sandbox.leftovers import run_folder
from referee.server.admission import Doorway, HandshakeCounts, core_options
from referee.server.auth import Authenticator, LaunchTokens, OpenAuth
from referee.server.capacity import DEFAULT_MAX_SESSIONS
from referee.server.codec import decode, passthrough
from referee.server.guard import ErrorGuard
from referee.server.handle import ServerHandle, WelcomeNote
from referee.server.lobby import Lobby
from referee.server.opening import PROTOCOL_VERSION as PROTOCOL_VERSION
from referee.server.opening import SERVER_VERSION as SERVER_VERSION
from referee.server.opening import SessionOpening
from referee.server.opening import protocol_refusal as protocol_refusal
from referee.server.session import BotSession, Malformed, PlayContext
from referee.server.transport import (
    KEEPALIVE_TIME_S,
    KEEPALIVE_TIMEOUT_S,
    server_options,
)
from referee.server.transport import (
    TlsFiles as TlsFiles,
)
from referee.telemetry.logs import get_logger

#: How long a dropped stream's reader may take to route what it had already received.
READER_SETTLE_S = 1.0
#: How long :meth:`RefereeServer.stop` waits for the Play handlers to finish their clean-up.
STREAMS_SETTLE_S = 5.0

log = get_logger("referee.server.app")

SERVICE = pb.DESCRIPTOR.services_by_name["Referee"].full_name
#: How long a bot whose connection dropped may take to come back to its running games.
RESUME_WINDOW_S = 10.0


#: The game a server pairs bots for when they ask for none (the course's game).
DEFAULT_GAME = "tetress"


def default_game_of(games: Iterable[str]) -> str:
    """:data:`DEFAULT_GAME` when offered, else the first offered game by name."""
    offered = sorted(games)
    return DEFAULT_GAME if DEFAULT_GAME in offered or not offered else offered[0]


def _offered_default(default_game: str | None, games: frozenset[str]) -> str:
    """``default_game`` (else :func:`default_game_of`), which must be among ``games``."""
    chosen = default_game or default_game_of(games)
    if chosen not in games:
        raise ValueError(
            f"the default game {chosen} is not among the games offered ({', '.join(sorted(games))})"
        )
    return chosen


class Service(Protocol):
    """Another gRPC service on the referee's port (e.g. the Arena service)."""

    #: Its full service name, for reflection and health.
    name: str

    def add_to(self, server: grpc.aio.Server) -> None: ...


class RefereeServer(SessionOpening):
    """A referee gRPC server; the games are played by whoever takes sessions from ``lobby``."""

    #: This server's ``/sdk`` page, named in a protocol refusal (empty: no web front).
    sdk_url: str = ""

    def __init__(
        self,
        *,
        auth: Authenticator | None = None,
        games: Iterable[str] | None = None,
        hello_timeout: float = 10.0,
        banner: str = "",
        services: Iterable[Service] = (),
        resume_window: float = RESUME_WINDOW_S,
        keepalive_time_s: float = KEEPALIVE_TIME_S,
        keepalive_timeout_s: float = KEEPALIVE_TIMEOUT_S,
        default_game: str | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        auth_timeout: float = 30.0,
        doorway: Doorway | None = None,
        allow_duplicate_sessions: bool = False,
        lobby: Lobby | None = None,
    ) -> None:
        self.auth: Authenticator = auth or OpenAuth()
        self.games = frozenset(games) if games is not None else frozenset(game_names())
        #: The game casual pairing gives a bot that did not ask for one.
        self.default_game = _offered_default(default_game, self.games)
        self.hello_timeout = hello_timeout
        #: Sent in every Welcome: a bot not resumed after a drop tells a restart by it.
        self.run_id = uuid.uuid4().hex
        #: New sessions beyond this many are refused (told to try again later).
        self.max_sessions = max_sessions
        #: How long a token check may take before the bot is told the server is busy.
        self.auth_timeout = auth_timeout
        #: Handshakes (see admission.py): outcomes counted; those in progress capped; duplicates?
        self.handshakes, self.doorway = HandshakeCounts(), doorway or Doorway()
        self.allow_duplicate_sessions = allow_duplicate_sessions
        self.banner = banner
        #: The open sessions (given: shared with a service built before the server).
        self.lobby = lobby if lobby is not None else Lobby()
        self.addresses: list[str] = []
        self._server: grpc.aio.Server | None = None
        self._health: health.aio.HealthServicer | None = None
        self._shutting_down = False
        #: Set by :meth:`begin_shutdown`: new sessions are refused, resumes still accepted.
        self._draining = False
        #: Seconds a bot whose stream dropped may take to resume its running games.
        self.resume_window = resume_window
        self._options = server_options(keepalive_time_s, keepalive_timeout_s) + core_options(
            max_sessions
        )
        self._expiries: set[asyncio.Task[None]] = set()
        #: The Play handlers serving a session: :meth:`stop` waits for them to leave their
        #: ``finally``, so none is left for the garbage collector to close (and log from).
        self._streams: set[asyncio.Task[object]] = set()
        #: Each may add a line for a new session's Welcome (e.g. a running tournament telling a
        #: remote bot which names its owner has entered): ``(identity, hello) -> str | None``.
        self.welcome_notes: list[WelcomeNote] = []
        self._socket_folder: str | None = None
        #: Players whose one-game credential has already opened its session.
        self._claimed: set[str | None] = set()
        #: More gRPC services on the same port (e.g. the Arena service): each has ``name`` (its
        #: full service name, for reflection and health) and ``add_to(grpc_server)``.
        self.services = list(services)

    def handle(self) -> ServerHandle:
        """What the games hosted on this server are given of it (:mod:`.handle`)."""
        auth = self.auth
        return ServerHandle(
            sessions=self.lobby,
            tokens=auth if isinstance(auth, LaunchTokens) else None,
            addresses=lambda: tuple(self.addresses),
            add_note=self.welcome_notes.append,
            drop_note=self._drop_note,
        )

    def _drop_note(self, note: WelcomeNote) -> None:
        if note in self.welcome_notes:
            self.welcome_notes.remove(note)

    async def start(
        self,
        address: str = "127.0.0.1:0",
        tls: TlsFiles | None = None,
        also: Sequence[str] = (),
        private_socket: bool = False,
    ) -> str:
        """Listen on ``address`` (``host:port``, port 0 picks one, or ``unix:path``); returns
        the bound address. ``also``: more addresses served without TLS (e.g. the ``unix:``
        socket sandboxed bots reach the server through), added to :attr:`addresses`;
        ``private_socket`` adds one in a new private folder, removed by :meth:`stop`."""
        if private_socket:
            self._socket_folder = str(run_folder("arena-server-"))
            also = [*also, f"unix:{self._socket_folder}/referee.sock"]
        if self._server is None:
            # Every service on the port is guarded: no Python exception reaches a client.
            self._server = grpc.aio.server(options=self._options, interceptors=[ErrorGuard()])
            handler = grpc.method_handlers_generic_handler(
                SERVICE,
                {
                    "Play": grpc.stream_stream_rpc_method_handler(
                        self._play,
                        request_deserializer=decode,
                        response_serializer=passthrough,
                    )
                },
            )
            self._server.add_generic_rpc_handlers((handler,))
            for service in self.services:
                service.add_to(self._server)
            self._health = health.aio.HealthServicer()
            health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)
            extra = tuple(service.name for service in self.services)
            reflection.enable_server_reflection(
                (SERVICE, *extra, health.SERVICE_NAME, reflection.SERVICE_NAME), self._server
            )
            bound = self._add_port(address, tls)
            extra_bound = [self._add_port(more, None) for more in also]
            await self._server.start()
            for name in ("", SERVICE):
                await self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        else:
            raise RuntimeError("server already started")
        self.addresses.append(bound)
        self.addresses.extend(extra_bound)
        log.info("listening", address=bound, games=sorted(self.games), tls=tls is not None)
        return bound

    def _add_port(self, address: str, tls: TlsFiles | None) -> str:
        assert self._server is not None, "start() makes the server first"
        if tls is not None:
            port = self._server.add_secure_port(address, tls.credentials())
        else:
            port = self._server.add_insecure_port(address)
        if address.startswith("unix:"):
            return address
        if not port:
            raise OSError(f"cannot listen on {address}")
        host = address.rsplit(":", 1)[0]
        return f"{host}:{port}"

    def begin_shutdown(self) -> None:
        """Stop accepting new sessions (they get ``SHUTTING_DOWN``); bots of running games may
        still resume their sessions while those games finish."""
        self._draining = True

    async def stop(self, grace: float | None = 1.0) -> None:
        """Stop listening, end every session, and stop the server."""
        if self._server is None:
            return
        self._shutting_down = True
        if self._health is not None:
            await self._health.enter_graceful_shutdown()
        for session in self.lobby.sessions():
            await session.goodbye("the server is shutting down")
        for task in list(self._expiries):
            task.cancel()
        # Each ended session's handler finishes its clean-up (leaving the lobby) before gRPC
        # cancels what is left; those cancelled are waited for too, so that none is finished
        # (and logs) by the garbage collector after the caller's loop has gone.
        await _settle(self._expiries | self._streams, STREAMS_SETTLE_S)
        await self._server.stop(grace)
        self._server = None
        await _settle(self._streams, STREAMS_SETTLE_S)
        if self._socket_folder is not None:
            shutil.rmtree(self._socket_folder, ignore_errors=True)

    async def wait_closed(self) -> None:
        if self._server is not None:
            await self._server.wait_for_termination()

    # -- the Play stream -------------------------------------------------------------------

    async def _play(
        self, messages: AsyncIterator[pb.BotMessage | Malformed], context: PlayContext
    ) -> None:
        # The stream is read with context.read() (see BotSession.read_loop), not ``messages``.
        session = await self._handshake(context)
        if session is None:
            return
        # Only streams with a session are waited for by stop(): one still in its handshake has
        # nothing to clean up, and a client that never says Hello must not delay a shutdown.
        stream = asyncio.current_task()
        assert stream is not None, "gRPC runs each handler in a task"
        self._streams.add(stream)
        try:
            await self._serve_session(session, context)
        finally:
            self._streams.discard(stream)

    async def _serve_session(self, session: BotSession, context: PlayContext) -> None:
        link = session.link
        ended = session.link_ended
        if session.resumes == 0:
            await self.lobby.add(session)
        log.info(
            "session_open",
            session=session.session_id,
            bot=session.name,
            version=session.version,
            player=session.identity.player_id,
            sdk=session.hello.sdk_version,
            peer=context.peer(),
            resumed=session.resumes > 0,
        )
        try:
            async with asyncio.TaskGroup() as tasks:
                reader = tasks.create_task(session.read_loop(context.read, link))
                try:
                    await ended.wait()
                except asyncio.CancelledError:
                    # gRPC cancels the handler when the connection drops: a message already
                    # received (a bot's last move, sent just before it went) is still routed
                    # before the reader stops.
                    await asyncio.wait({reader}, timeout=READER_SETTLE_S)
                    raise
                if session.closed.is_set() and session.link == link:
                    # The last messages (GameOver, Goodbye) must leave before the stream ends,
                    # and before the reader is cancelled: cancelling a read cancels the call.
                    await session.flush()
                reader.cancel()
        finally:
            if session.link == link and not session.closed.is_set() and not session.suspended:
                # gRPC cancels the handler when the connection drops, possibly before the
                # reader has noticed: the drop is the same.
                session.link_lost("the connection was lost")
            if session.link != link:
                log.info("stream_superseded", session=session.session_id)
            elif session.resumable:
                # The games wait for the bot; the session goes once the window has passed.
                task = asyncio.create_task(self._expire(session, link))
                self._expiries.add(task)
                task.add_done_callback(self._expiries.discard)
            else:
                session.close(session.close_reason or "the stream ended")
                await self.lobby.remove(session)
                log.info("session_closed", session=session.session_id, reason=session.close_reason)

    async def _expire(self, session: BotSession, link: int) -> None:
        try:
            await asyncio.sleep(session.resume_window)
        finally:
            if session.link == link and not session.closed.is_set():
                session.close(
                    f"{session.suspend_reason or 'the connection was lost'}; it did not "
                    f"reconnect within {session.resume_window:g} s"
                )
            if session.closed.is_set():
                await self.lobby.remove(session)
                log.info("session_closed", session=session.session_id, reason=session.close_reason)


async def _settle(tasks: set[asyncio.Task[object]], timeout: float) -> None:
    """Wait (at most ``timeout``) for ``tasks`` to end, the caller's own task aside."""
    others = {task for task in tasks if task is not asyncio.current_task() and not task.done()}
    if others:
        await asyncio.wait(others, timeout=timeout)
