"""The ``grpc.aio`` referee server: the ``Play`` stream, health checking and reflection.

The server only handles sessions: it authenticates each bot, keeps it in the :class:`Lobby`
and routes its messages. Who plays whom is decided elsewhere (``referee match``, the
matchmaker of ``referee serve``, tournaments), by taking sessions from the lobby and handing
them to a :class:`~referee.match.MatchRunner`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from client_sdk.proto import referee_pb2 as pb
from engine.registry import game_names
from referee.auth import Authenticator, AuthError, OpenAuth
from referee.lobby import Lobby
from referee.logging import get_logger
from referee.session import BotSession, Identity, Malformed, handshake_queue

log = get_logger("referee.server")

SERVICE = pb.DESCRIPTOR.services_by_name["Referee"].full_name
PROTOCOL_VERSION = 1
SERVER_VERSION = "tetromino-referee/0.1.0"
#: A bot message over ``MAX_BOT_MESSAGE_BYTES`` is refused by the referee: a protocol error for
#: the bot's games, with the stream intact so the bot is told why. gRPC's own cap on an incoming
#: message is higher; beyond it gRPC cuts the stream without telling the handler why (the bot
#: is then treated as having dropped its connection). A move is well under 1 KiB.
MAX_MESSAGE_BYTES = 4 << 20
MAX_BOT_MESSAGE_BYTES = 64 * 1024
#: Keep-alive: the server pings every connection after this much silence and drops it when a
#: ping is not answered in time, so a silently stalled bot is noticed (and treated as a drop).
KEEPALIVE_TIME_S = 20.0
KEEPALIVE_TIMEOUT_S = 10.0
#: How long a bot whose connection dropped may take to come back to its running games.
RESUME_WINDOW_S = 10.0


def server_options(
    keepalive_time_s: float = KEEPALIVE_TIME_S, keepalive_timeout_s: float = KEEPALIVE_TIMEOUT_S
) -> list[tuple[str, Any]]:
    """The gRPC server options: keep-alive, message sizes; clients may ping every 5 s (an SDK
    must not ping more often, or gRPC closes the connection)."""
    return [
        ("grpc.keepalive_time_ms", int(keepalive_time_s * 1000)),
        ("grpc.keepalive_timeout_ms", int(keepalive_timeout_s * 1000)),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.http2.min_sent_ping_interval_without_data_ms", int(keepalive_time_s * 1000)),
        # gRPC 1.6x+ waits for a ping ack this long (default 60 s), whatever keepalive_timeout.
        ("grpc.http2.ping_timeout_ms", int(keepalive_timeout_s * 1000)),
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", 16 * MAX_MESSAGE_BYTES),
        ("grpc.so_reuseport", 0),
    ]


SERVER_OPTIONS = server_options()


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """PEM files for a TLS listener."""

    cert: str
    key: str

    def credentials(self) -> Any:
        with open(self.key, "rb") as key, open(self.cert, "rb") as cert:
            return grpc.ssl_server_credentials([(key.read(), cert.read())])


def _decode(data: bytes) -> pb.BotMessage | Malformed:
    # A message that does not decode must become a protocol-error verdict for its bot, not an
    # aborted stream, so decoding never raises.
    if len(data) > MAX_BOT_MESSAGE_BYTES:
        return Malformed(
            len(data), f"at most {MAX_BOT_MESSAGE_BYTES} bytes are accepted", oversized=True
        )
    try:
        return pb.BotMessage.FromString(data)
    except DecodeError as exc:
        return Malformed(len(data), str(exc))


def _passthrough(data: bytes) -> bytes:
    return data


class RefereeServer:
    """A referee gRPC server; the games are played by whoever takes sessions from ``lobby``."""

    def __init__(
        self,
        *,
        auth: Authenticator | None = None,
        games: Iterable[str] | None = None,
        hello_timeout: float = 10.0,
        banner: str = "",
        services: Iterable[Any] = (),
        resume_window: float = RESUME_WINDOW_S,
        keepalive_time_s: float = KEEPALIVE_TIME_S,
        keepalive_timeout_s: float = KEEPALIVE_TIMEOUT_S,
    ) -> None:
        self.auth: Authenticator = auth or OpenAuth()
        self.games = frozenset(games) if games is not None else frozenset(game_names())
        self.hello_timeout = hello_timeout
        self.banner = banner
        self.lobby = Lobby()
        self.addresses: list[str] = []
        self._server: Any = None
        self._health: Any = None
        self._shutting_down = False
        #: Set by :meth:`begin_shutdown`: new sessions are refused, resumes still accepted.
        self._draining = False
        #: Seconds a bot whose stream dropped may take to resume its running games.
        self.resume_window = resume_window
        self._options = server_options(keepalive_time_s, keepalive_timeout_s)
        self._expiries: set[asyncio.Task[None]] = set()
        #: More gRPC services on the same port (e.g. the Arena service): each has ``name`` (its
        #: full service name, for reflection and health) and ``add_to(grpc_server)``.
        self.services = list(services)

    async def start(self, address: str = "127.0.0.1:0", tls: TlsFiles | None = None) -> str:
        """Listen on ``address`` (``host:port``, port 0 picks one, or ``unix:path``); returns
        the bound address."""
        if self._server is None:
            self._server = grpc.aio.server(options=self._options)
            handler = grpc.method_handlers_generic_handler(
                SERVICE,
                {
                    "Play": grpc.stream_stream_rpc_method_handler(
                        self._play,
                        request_deserializer=_decode,
                        # Sessions serialise their messages themselves (see BotSession.send).
                        response_serializer=_passthrough,
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
            await self._server.start()
            for name in ("", SERVICE):
                await self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        else:
            raise RuntimeError("server already started")
        self.addresses.append(bound)
        log.info("listening", address=bound, games=sorted(self.games), tls=tls is not None)
        return bound

    def _add_port(self, address: str, tls: TlsFiles | None) -> str:
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

    async def wait_closed(self) -> None:
        if self._server is not None:
            await self._server.wait_for_termination()

    # -- the Play stream -------------------------------------------------------------------

    async def _play(self, messages: AsyncIterator[pb.BotMessage | Malformed], context: Any) -> None:
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
                await ended.wait()
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

    async def _handshake(self, context: Any) -> BotSession | None:
        async def fail(code: int, message: str) -> None:
            error = pb.Error(code=code, message=message, fatal=True)  # type: ignore[arg-type]
            with contextlib.suppress(Exception):
                await context.write(pb.RefereeMessage(error=error).SerializeToString())
            log.info("session_refused", reason=message, peer=context.peer())

        if self._shutting_down:
            await fail(pb.ERROR_CODE_SHUTTING_DOWN, "the server is shutting down")
            return None
        first_q: asyncio.Queue[Any] = asyncio.Queue()
        # The first read gets its own task so that its timeout lands on the queue; a stream
        # that says nothing in time is dropped anyway, so cancelling that read is harmless.
        first_reader = asyncio.create_task(handshake_queue(context.read, first_q))
        try:
            async with asyncio.timeout(self.hello_timeout):
                first = await first_q.get()
        except TimeoutError:
            first_reader.cancel()
            await fail(pb.ERROR_CODE_BAD_MESSAGE, f"no Hello within {self.hello_timeout:g} s")
            return None
        await first_reader
        if first is None:
            return None
        if isinstance(first, Malformed) or first.WhichOneof("kind") != "hello":
            await fail(pb.ERROR_CODE_BAD_MESSAGE, "the first message must be a Hello")
            return None
        hello = first.hello
        if self._draining and not (
            hello.resume_session_id and self.lobby.get(hello.resume_session_id) is not None
        ):
            await fail(pb.ERROR_CODE_SHUTTING_DOWN, "the server is shutting down")
            return None
        if hello.protocol_version not in (0, PROTOCOL_VERSION):
            await fail(
                pb.ERROR_CODE_UNSUPPORTED_PROTOCOL,
                f"protocol version {hello.protocol_version} is not supported; "
                f"this referee speaks {PROTOCOL_VERSION}",
            )
            return None
        try:
            identity = await self.auth.authenticate(hello)
        except AuthError as exc:
            await fail(pb.ERROR_CODE_UNAUTHENTICATED, str(exc))
            return None
        if hello.resume_session_id:
            resumed = await self._resume(hello, identity, context)
            if resumed is not None:
                return resumed
        wanted = {g.lower() for g in hello.games}
        games = self.games & wanted if wanted else self.games
        if not games:
            await fail(
                pb.ERROR_CODE_NO_GAMES,
                f"this referee plays {', '.join(sorted(self.games))}; "
                f"the bot plays {', '.join(sorted(wanted))}",
            )
            return None
        session = BotSession(
            hello=hello, identity=identity, games=frozenset(games), context=context
        )
        session.resume_window = self.resume_window
        welcome = pb.Welcome(
            session_id=session.session_id,
            server_version=SERVER_VERSION,
            protocol_version=PROTOCOL_VERSION,
            bot_name=identity.name,
            message=self.banner,
            games=sorted(games),
        )
        await session.send_quietly(pb.RefereeMessage(welcome=welcome))
        return session

    async def _resume(self, hello: pb.Hello, identity: Identity, context: Any) -> BotSession | None:
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
            protocol_version=PROTOCOL_VERSION,
            bot_name=identity.name,
            message="session resumed",
            games=sorted(session.games),
        )
        await session.send_quietly(pb.RefereeMessage(welcome=welcome))
        session.announce_resumed()
        log.info("session_resumed", session=session.session_id, games=session.active_games)
        return session
