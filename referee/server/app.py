"""The ``grpc.aio`` referee server: the ``Play`` stream, health checking and reflection.

The server only handles sessions: it authenticates each bot, keeps it in the :class:`Lobby`
and routes its messages. Who plays whom is decided elsewhere (``referee match``, the
matchmaker of ``referee serve``, tournaments), by taking sessions from the lobby and handing
them to a :class:`~referee.match.runner.MatchRunner`.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Protocol

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from client_sdk.proto import referee_pb2 as pb
from engine.registry import game_names
from referee.sandbox.leftovers import run_folder
from referee.server.admission import (
    DEFAULT_MAX_SESSIONS,
    Doorway,
    HandshakeCounts,
    Refusal,
    Refused,
    authenticate,
    casual_line,
    core_options,
    first_hello,
    one_live_session,
)
from referee.server.auth import Authenticator, OpenAuth
from referee.server.codec import decode, passthrough
from referee.server.guard import ErrorGuard
from referee.server.lobby import Lobby
from referee.server.session import BotSession, Identity, Malformed, PlayContext
from referee.server.throttle import peer_address
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

log = get_logger("referee.server.app")

SERVICE = pb.DESCRIPTOR.services_by_name["Referee"].full_name
#: The protocol version, as the protocol file defines it (the SDK uses the same constant).
PROTOCOL_VERSION: int = pb.PROTOCOL_VERSION_CURRENT
SERVER_VERSION = "tetromino-referee/0.1.0"
#: How long a bot whose connection dropped may take to come back to its running games.
RESUME_WINDOW_S = 10.0


def protocol_refusal(version: int, sdk_url: str = "") -> str | None:
    """Why a bot speaking protocol ``version`` is refused (``None``: it is not), and where
    the matching SDK is: ``sdk_url`` (this server's ``/sdk`` page) when it serves one."""
    spoken = version or 1  # 0: an old bot that did not say, i.e. version 1
    if spoken == PROTOCOL_VERSION:
        return None
    where = f"get it at {sdk_url}" if sdk_url else "ask the server's operator for it"
    return (
        f"the bot speaks protocol version {spoken}, this referee speaks {PROTOCOL_VERSION}: "
        f"install the SDK version that matches this referee ({SERVER_VERSION}): {where}"
    )


#: The game a server pairs bots for when they ask for none (the course's game).
DEFAULT_GAME = "tetress"


def default_game_of(games: Iterable[str]) -> str:
    """:data:`DEFAULT_GAME` when offered, else the first offered game by name."""
    offered = sorted(games)
    return DEFAULT_GAME if DEFAULT_GAME in offered or not offered else offered[0]


class Service(Protocol):
    """Another gRPC service on the referee's port (e.g. the Arena service)."""

    #: Its full service name, for reflection and health.
    name: str

    def add_to(self, server: grpc.aio.Server) -> None: ...


class RefereeServer:
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
    ) -> None:
        self.auth: Authenticator = auth or OpenAuth()
        self.games = frozenset(games) if games is not None else frozenset(game_names())
        #: The game casual pairing gives a bot that did not ask for one.
        self.default_game = default_game or default_game_of(self.games)
        if self.default_game not in self.games:
            raise ValueError(
                f"the default game {self.default_game} is not among the games offered "
                f"({', '.join(sorted(self.games))})"
            )
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
        self.lobby = Lobby()
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
        #: Each may add a line for a new session's Welcome (e.g. a running tournament telling a
        #: remote bot which names its owner has entered): ``(identity, hello) -> str | None``.
        self.welcome_notes: list[Callable[[Identity, pb.Hello], str | None]] = []
        self._socket_folder: str | None = None
        #: Players whose one-game credential has already opened its session.
        self._claimed: set[str | None] = set()
        #: More gRPC services on the same port (e.g. the Arena service): each has ``name`` (its
        #: full service name, for reflection and health) and ``add_to(grpc_server)``.
        self.services = list(services)

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
        await self._server.stop(grace)
        self._server = None
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

    async def _handshake(self, context: PlayContext) -> BotSession | None:
        """Read the Hello and admit the bot, or tell it why not (logged and counted)."""
        counts = self.handshakes
        counts.in_progress += 1
        address = peer_address(context.peer())
        busy = self.doorway.enter(address)
        try:
            if busy is not None:
                raise busy
            session = await self._admit(context)
        except Refused as refused:
            counts.refuse(refused.why)
            if refused.code:
                error = pb.Error(
                    code=refused.code,  # type: ignore[arg-type]
                    message=refused.message,
                    fatal=True,
                    retry_after_s=refused.retry_after_s,
                )
                with contextlib.suppress(Exception):
                    await context.write(pb.RefereeMessage(error=error).SerializeToString())
            unlogged = self.handshakes.sampled.unlogged(refused.why, address)
            if unlogged is not None:
                log.info(
                    "session_refused",
                    why=refused.why.value,
                    reason=refused.message,
                    peer=context.peer(),
                    retryable=refused.why.retryable,
                    like_it_unlogged=unlogged,
                )
            return None
        finally:
            counts.in_progress -= 1
            if busy is None:
                self.doorway.leave(address)
        counts.admit(resumed=session.resumes > 0)
        return session

    def _check_room(self, hello: pb.Hello) -> None:
        """Refuse a new session while draining or full; a resume is always let through."""
        if hello.resume_session_id and self.lobby.get(hello.resume_session_id) is not None:
            return
        if self._draining:
            raise Refused(
                Refusal.SHUTTING_DOWN, pb.ERROR_CODE_SHUTTING_DOWN, "the server is shutting down"
            )
        # Handshakes under way count too: a burst must not overshoot between check and add.
        held = len(self.lobby) + self.handshakes.in_progress - 1
        if held >= self.max_sessions:
            raise Refused(
                Refusal.FULL,
                pb.ERROR_CODE_RESOURCE_EXHAUSTED,
                f"the server is full ({self.max_sessions} sessions); try again later",
            )

    async def _admit(self, context: PlayContext) -> BotSession:
        if self._shutting_down:
            raise Refused(
                Refusal.SHUTTING_DOWN, pb.ERROR_CODE_SHUTTING_DOWN, "the server is shutting down"
            )
        hello = await first_hello(context, self.hello_timeout)
        self._check_room(hello)
        protocol = protocol_refusal(hello.protocol_version, self.sdk_url)
        if protocol is not None:
            raise Refused(Refusal.PROTOCOL, pb.ERROR_CODE_UNSUPPORTED_PROTOCOL, protocol)
        identity = await authenticate(self.auth, hello, self.auth_timeout, context.peer())
        if hello.resume_session_id:
            resumed = await self._resume(hello, identity, context)
            if resumed is not None:
                return resumed
        if not self.allow_duplicate_sessions:
            await one_live_session(self.lobby, hello, identity)
        return await self._new_session(hello, identity, context)

    async def _new_session(
        self, hello: pb.Hello, identity: Identity, context: PlayContext
    ) -> BotSession:
        wanted = {g.lower() for g in hello.games}
        games = self.games & wanted if wanted else self.games
        if not games:
            raise Refused(
                Refusal.NO_GAMES,
                pb.ERROR_CODE_NO_GAMES,
                f"this referee plays {', '.join(sorted(self.games))}; "
                f"the bot plays {', '.join(sorted(wanted))}",
            )
        asked = {g.lower() for g in hello.wanted_games}
        casual = games & asked if asked else games & {self.default_game}
        if asked and not casual:
            raise Refused(
                Refusal.NO_GAMES,
                pb.ERROR_CODE_NO_GAMES,
                f"this referee plays {', '.join(sorted(self.games))}; "
                f"the bot asked for {', '.join(sorted(asked))}",
            )
        if not self._claim(identity):
            raise Refused(
                Refusal.UNAUTHENTICATED,
                pb.ERROR_CODE_UNAUTHENTICATED,
                "this one-game token has already been used",
            )
        session = BotSession(
            hello=hello,
            identity=identity,
            games=frozenset(games),
            context=context,
            casual_games=frozenset(casual),
        )
        session.resume_window = self.resume_window
        welcome = pb.Welcome(
            session_id=session.session_id,
            server_version=SERVER_VERSION,
            server_run=self.run_id,
            protocol_version=PROTOCOL_VERSION,
            bot_name=identity.name,
            message="; ".join(
                m
                for m in (
                    self.banner,
                    casual_line(self.games, self.default_game, casual, asked, hello.channel),
                    *self._notes(identity, hello),
                )
                if m
            ),
            games=sorted(games),
        )
        await session.send_quietly(pb.RefereeMessage(welcome=welcome))
        return session

    def _notes(self, identity: Identity, hello: pb.Hello) -> list[str]:
        notes = []
        for note in self.welcome_notes:
            try:
                line = note(identity, hello)
            except Exception:
                log.exception("welcome_note_failed")
                continue
            if line:
                notes.append(line)
        return notes

    def _claim(self, identity: Identity) -> bool:
        """Whether a new session may open for ``identity``: a one-game token opens one only,
        so a bot that read its opponent's token (or a second copy of itself) cannot take a
        seat that is already taken or was played. Resuming that session is not a new one."""
        if not identity.one_session:
            return True
        if identity.player_id in self._claimed:
            return False
        self._claimed.add(identity.player_id)
        return True

    async def _resume(
        self, hello: pb.Hello, identity: Identity, context: PlayContext
    ) -> BotSession | None:
        """Re-attach a dropped session to this stream (``None``: nothing to resume, a new
        session starts and the bot learns so from the new session id)."""
        session = self.lobby.get(hello.resume_session_id)
        if (
            session is None
            or session.closed.is_set()
            or session.identity != identity
            or session.active_games == 0
        ):
            log.info("resume_refused", session=hello.resume_session_id, peer=context.peer())
            return None
        session.resume(context)
        welcome = pb.Welcome(
            session_id=session.session_id,
            server_version=SERVER_VERSION,
            server_run=self.run_id,
            protocol_version=PROTOCOL_VERSION,
            bot_name=identity.name,
            message="session resumed",
            games=sorted(session.games),
        )
        await session.send_quietly(pb.RefereeMessage(welcome=welcome))
        session.announce_resumed()
        log.info("session_resumed", session=session.session_id, games=session.active_games)
        return session
