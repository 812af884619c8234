"""Opening a session: the handshake half of the referee server.

A bot's stream starts with its Hello; :class:`SessionOpening` reads it and opens a new session,
re-attaches a dropped one (a resume), or refuses the bot with the reason (logged and counted).
:class:`~referee.server.app.RefereeServer` is one, and keeps the settings read here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from client_sdk.proto import referee_pb2 as pb
from referee.server.admission import (
    Doorway,
    HandshakeCounts,
    HandshakeRefused,
    Refusal,
    authenticate,
    casual_line,
    first_hello,
    one_live_session,
)
from referee.server.auth import Authenticator
from referee.server.lobby import Lobby
from referee.server.session import BotSession, Identity, PlayContext
from referee.server.throttle import peer_address
from referee.telemetry.logs import get_logger

# The server's logger: a session's opening and its stream log under one name.
log = get_logger("referee.server.app")

#: The protocol version, as the protocol file defines it (the SDK uses the same constant).
PROTOCOL_VERSION: int = pb.PROTOCOL_VERSION_CURRENT
SERVER_VERSION = "tetromino-referee/0.1.0"


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


class SessionOpening:
    """Reads each stream's Hello and opens, resumes or refuses its session."""

    # The server's settings and state that opening a session reads (set by the server).
    sdk_url: str
    auth: Authenticator
    games: frozenset[str]
    default_game: str
    hello_timeout: float
    run_id: str
    max_sessions: int
    auth_timeout: float
    handshakes: HandshakeCounts
    doorway: Doorway
    allow_duplicate_sessions: bool
    banner: str
    lobby: Lobby
    resume_window: float
    welcome_notes: list[Callable[[Identity, pb.Hello], str | None]]
    _shutting_down: bool
    _draining: bool
    _claimed: set[str | None]

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
        except HandshakeRefused as refused:
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
            raise HandshakeRefused(
                Refusal.SHUTTING_DOWN, pb.ERROR_CODE_SHUTTING_DOWN, "the server is shutting down"
            )
        # Handshakes under way count too: a burst must not overshoot between check and add.
        held = len(self.lobby) + self.handshakes.in_progress - 1
        if held >= self.max_sessions:
            raise HandshakeRefused(
                Refusal.FULL,
                pb.ERROR_CODE_RESOURCE_EXHAUSTED,
                f"the server is full ({self.max_sessions} sessions); try again later",
            )

    async def _admit(self, context: PlayContext) -> BotSession:
        if self._shutting_down:
            raise HandshakeRefused(
                Refusal.SHUTTING_DOWN, pb.ERROR_CODE_SHUTTING_DOWN, "the server is shutting down"
            )
        hello = await first_hello(context, self.hello_timeout)
        self._check_room(hello)
        protocol = protocol_refusal(hello.protocol_version, self.sdk_url)
        if protocol is not None:
            raise HandshakeRefused(Refusal.PROTOCOL, pb.ERROR_CODE_UNSUPPORTED_PROTOCOL, protocol)
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
            raise HandshakeRefused(
                Refusal.NO_GAMES,
                pb.ERROR_CODE_NO_GAMES,
                f"this referee plays {', '.join(sorted(self.games))}; "
                f"the bot plays {', '.join(sorted(wanted))}",
            )
        asked = {g.lower() for g in hello.wanted_games}
        casual = games & asked if asked else games & {self.default_game}
        if asked and not casual:
            raise HandshakeRefused(
                Refusal.NO_GAMES,
                pb.ERROR_CODE_NO_GAMES,
                f"this referee plays {', '.join(sorted(self.games))}; "
                f"the bot asked for {', '.join(sorted(asked))}",
            )
        if not self._claim(identity):
            raise HandshakeRefused(
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
        message = "; ".join(
            m
            for m in (
                self.banner,
                casual_line(self.games, self.default_game, casual, asked, hello.channel),
                *self._notes(identity, hello),
            )
            if m
        )
        await self._welcome(session, message)
        return session

    async def _welcome(self, session: BotSession, message: str) -> None:
        """Tell ``session`` it is open (or open again): its id, this server, its games."""
        welcome = pb.Welcome(
            session_id=session.session_id,
            server_version=SERVER_VERSION,
            server_run=self.run_id,
            protocol_version=PROTOCOL_VERSION,
            bot_name=session.identity.name,
            message=message,
            games=sorted(session.games),
        )
        await session.send_quietly(pb.RefereeMessage(welcome=welcome))

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
        await self._welcome(session, "session resumed")
        session.announce_resumed()
        log.info("session_resumed", session=session.session_id, games=session.active_games)
        return session
