"""Admitting bot sessions: the server's capacity, and the count of every handshake's outcome.

A burst of connections (a whole class starting its bots at once) must end with every bot
either admitted or told why not, never silently dropped. Two places can drop a stream:

* gRPC core, before the handler runs. Calls that arrive while the Python server has not yet
  asked for the next one wait in core's pending queue; past ``grpc.server.max_pending_requests``
  (default 1,000) core refuses a random share of new calls, and past the hard limit (default
  3,000) all of them, with no word to the handler. A 2,000-session burst crosses the first
  line (that was the lost sessions of a 1,000-game run). :func:`core_options` sizes both lines
  from the session capacity, so a burst the server can hold is queued, not refused.
* The handshake itself: no Hello in time, a bad token, no common game, a full server. Each is
  answered with an :class:`~tetromino.referee.v1.Error` that says why, logged, and counted
  here by :class:`Refusal` in :class:`HandshakeCounts`, which also feeds the Prometheus
  counters ``tetromino_handshakes_refused_total{reason}`` and
  ``tetromino_handshakes_admitted_total{kind}`` (:mod:`referee.telemetry.metrics`).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import resource
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TypedDict

from client_sdk.proto import referee_pb2 as pb
from referee import errors
from referee.server import bounds
from referee.server.auth import Authenticator, AuthError
from referee.server.capacity import (
    DEFAULT_MAX_HANDSHAKES,
    DEFAULT_MAX_HANDSHAKES_PER_ADDRESS,
)
from referee.server.lobby import Lobby
from referee.server.session import (
    Identity,
    Malformed,
    PlayContext,
    handshake_queue,
)
from referee.telemetry import metrics
from referee.text.names import as_name


class Refusal(enum.Enum):
    """Why a handshake did not end in a session."""

    SHUTTING_DOWN = "shutting_down"
    FULL = "full"
    HELLO_TIMEOUT = "hello_timeout"
    BAD_HELLO = "bad_hello"
    STREAM_ENDED = "stream_ended"
    PROTOCOL = "protocol"
    UNAUTHENTICATED = "unauthenticated"
    AUTH_TIMEOUT = "auth_timeout"
    NO_GAMES = "no_games"
    #: Too many failed logins from the address or with the token id (tried again later).
    THROTTLED = "throttled"
    #: Too many handshakes in progress (unauthenticated streams), in all or from one address.
    BUSY = "busy"
    #: The same token and bot name already have a live session.
    DUPLICATE = "duplicate"

    @property
    def retryable(self) -> bool:
        """Whether the same bot may succeed later (the SDK backs off and tries again)."""
        return self in _RETRYABLE


_RETRYABLE = frozenset(
    {
        Refusal.SHUTTING_DOWN,
        Refusal.FULL,
        Refusal.HELLO_TIMEOUT,
        Refusal.AUTH_TIMEOUT,
        Refusal.THROTTLED,
        Refusal.BUSY,
    }
)
metrics.declare_refusal_reasons(why.value for why in Refusal)


class HandshakeRefused(errors.Refused):
    """A handshake that ends without a session, ``why`` (the :class:`Refusal` counted):
    ``code`` and ``message`` go to the bot (no code: the stream is already gone, nobody to
    tell). ``retry_after_s``: when another try may succeed (0: the bot's own back-off decides)."""

    def __init__(self, why: Refusal, code: int, message: str, retry_after_s: int = 0) -> None:
        super().__init__(message, retry_after_s)
        self.why = why
        self.code = code


class HandshakeSnapshot(TypedDict):
    """:meth:`HandshakeCounts.snapshot`: the counters, ``refused`` by reason."""

    admitted: int
    resumed: int
    in_progress: int
    timed_out: int
    refused: dict[str, int]


@dataclass
class HandshakeCounts:
    """Counters of handshake outcomes since the server started (monotonic, never reset)."""

    admitted: int = 0
    resumed: int = 0
    refused: Counter[Refusal] = field(default_factory=Counter)
    #: Handshakes under way now (Hello read, not yet admitted or refused).
    in_progress: int = 0
    #: Which refusals get a log line (floods of throttled or busy ones are sampled).
    sampled: RefusalLog = field(default_factory=lambda: RefusalLog())

    def refuse(self, why: Refusal) -> None:
        self.refused[why] += 1
        metrics.handshake_refused(why.value)

    def admit(self, resumed: bool) -> None:
        if resumed:
            self.resumed += 1
        else:
            self.admitted += 1
        metrics.handshake_admitted(resumed)

    @property
    def timed_out(self) -> int:
        return self.refused[Refusal.HELLO_TIMEOUT] + self.refused[Refusal.AUTH_TIMEOUT]

    def snapshot(self) -> HandshakeSnapshot:
        """Plain numbers for a metrics endpoint or a log line: ``refused`` by reason (every
        reason present, zeros included, so a scraper sees a stable set of series)."""
        return {
            "admitted": self.admitted,
            "resumed": self.resumed,
            "in_progress": self.in_progress,
            "timed_out": self.timed_out,
            "refused": {why.value: self.refused[why] for why in Refusal},
        }


async def first_hello(context: PlayContext, timeout: float) -> pb.Hello:
    """The stream's first message, which must be a Hello within ``timeout`` seconds and within
    the bounds of :func:`referee.server.bounds.check_hello`; its name and version cleaned."""
    first_q: asyncio.Queue[pb.BotMessage | Malformed | None] = asyncio.Queue()
    # The first read gets its own task so that its timeout lands on the queue; a stream
    # that says nothing in time is dropped anyway, so cancelling that read is harmless.
    first_reader = asyncio.create_task(handshake_queue(context.read, first_q))
    try:
        async with asyncio.timeout(timeout):
            first = await first_q.get()
    except TimeoutError:
        first_reader.cancel()
        raise HandshakeRefused(
            Refusal.HELLO_TIMEOUT,
            pb.ERROR_CODE_BAD_MESSAGE,
            f"no Hello within {timeout:g} s",
        ) from None
    await first_reader
    if first is None:
        raise HandshakeRefused(Refusal.STREAM_ENDED, 0, "the stream ended before a Hello")
    if isinstance(first, Malformed) or first.WhichOneof("kind") != "hello":
        raise HandshakeRefused(
            Refusal.BAD_HELLO, pb.ERROR_CODE_BAD_MESSAGE, "the first message must be a Hello"
        )
    hello: pb.Hello = first.hello
    try:
        bounds.check_hello(hello)
    except bounds.BadField as exc:
        raise HandshakeRefused(Refusal.BAD_HELLO, pb.ERROR_CODE_BAD_MESSAGE, str(exc)) from None
    # The bot's own name and version are shown in tables and stored as its registration:
    # from here on they are names (referee.text.names), whatever the bot sent.
    hello.bot_name = as_name(hello.bot_name)
    hello.bot_version = as_name(hello.bot_version, "") if hello.bot_version else ""
    return hello


async def authenticate(
    auth: Authenticator, hello: pb.Hello, timeout: float, peer: str = ""
) -> Identity:
    """``auth``'s identity for ``hello``; a refusal, or a busy refusal after ``timeout`` s."""
    try:
        async with asyncio.timeout(timeout):
            return await auth.authenticate(hello, peer)
    except AuthError as exc:
        if exc.retry_after_s:
            raise HandshakeRefused(
                Refusal.THROTTLED,
                pb.ERROR_CODE_RESOURCE_EXHAUSTED,
                str(exc),
                exc.retry_after_s,
            ) from None
        raise HandshakeRefused(
            Refusal.UNAUTHENTICATED, pb.ERROR_CODE_UNAUTHENTICATED, str(exc)
        ) from None
    except TimeoutError:
        raise HandshakeRefused(
            Refusal.AUTH_TIMEOUT,
            pb.ERROR_CODE_RESOURCE_EXHAUSTED,
            f"the token check took longer than {timeout:g} s (the server is busy); try again later",
        ) from None


def core_options(max_sessions: int) -> list[tuple[str, int]]:
    """gRPC core options sized for ``max_sessions``: a burst of that many new streams waits
    in core's pending queue instead of being refused before the handler could say why."""
    return [
        ("grpc.server.max_pending_requests", max(1000, max_sessions)),
        ("grpc.server.max_pending_requests_hard_limit", max(3000, 2 * max_sessions)),
    ]


def raise_open_files_limit(max_sessions: int) -> tuple[int, str]:
    """Raise this process's soft limit on open files towards what ``max_sessions`` remote bots
    need (one socket each, plus a margin for the database, logs and launched bots); returns
    the limit now in force and a warning when even the hard limit is too low."""
    needed = max_sessions + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    if soft != resource.RLIM_INFINITY and soft < needed:
        return soft, (
            f"the open files limit ({soft}) is below what {max_sessions} sessions need "
            f"({needed}); raise it (ulimit -n, or LimitNOFILE= in the systemd unit)"
        )
    return soft, ""


class Doorway:
    """Counts the unauthenticated streams (handshakes under way) in all and per address."""

    def __init__(
        self,
        max_total: int = DEFAULT_MAX_HANDSHAKES,
        max_per_address: int = DEFAULT_MAX_HANDSHAKES_PER_ADDRESS,
    ) -> None:
        self.max_total = max_total
        self.max_per_address = max_per_address
        self._by_address: Counter[str] = Counter()

    def enter(self, address: str) -> HandshakeRefused | None:
        """Take a place for a handshake from ``address``, or say why not (leave() after)."""
        total = sum(self._by_address.values())
        if total >= self.max_total:
            why = f"too many logins in progress ({self.max_total})"
        elif self._by_address[address] >= self.max_per_address:
            why = f"too many logins in progress from {address} ({self.max_per_address})"
        else:
            self._by_address[address] += 1
            return None
        return HandshakeRefused(
            Refusal.BUSY, pb.ERROR_CODE_RESOURCE_EXHAUSTED, f"{why}; retry after 1 s", 1
        )

    def leave(self, address: str) -> None:
        self._by_address[address] -= 1
        if self._by_address[address] <= 0:
            del self._by_address[address]


class RefusalLog:
    """Which refusals to log: all, except floods. Throttled and busy refusals come by the
    thousand from one address under attack, and a log line each would be the attack's best
    lever; the first of each kind per address is logged every ``every_s`` seconds, with how
    many like it went unlogged since (the counters count every one)."""

    SAMPLED = frozenset({Refusal.THROTTLED, Refusal.BUSY})

    def __init__(self, every_s: float = 10.0, max_addresses: int = 10_000) -> None:
        self.every_s = every_s
        self.max_addresses = max_addresses
        self._last: dict[tuple[Refusal, str], tuple[float, int]] = {}

    def unlogged(self, why: Refusal, address: str) -> int | None:
        """``None``: do not log this one; else log it, with this many unlogged before it."""
        if why not in self.SAMPLED:
            return 0
        now = time.monotonic()
        last, skipped = self._last.get((why, address), (-self.every_s, 0))
        if now - last < self.every_s:
            self._last[(why, address)] = (last, skipped + 1)
            return None
        if len(self._last) >= self.max_addresses:
            self._last.clear()
        self._last[(why, address)] = (now, 0)
        return skipped


async def one_live_session(lobby: Lobby, hello: pb.Hello, identity: Identity) -> None:
    """The rule of one live session per (stored token, bot name).

    A second copy is refused (:class:`HandshakeRefused`, final); one that presents the live
    session's id is the same client coming back and replaces it (the old one is told so). A
    token of no stored table (open servers, one-game tokens) is not limited here."""
    if identity.token_id is None:
        return
    for other in lobby.sessions():
        same = other.identity.token_id == identity.token_id and other.name == identity.name
        if not same or other.closed.is_set():
            continue
        if hello.resume_session_id and hello.resume_session_id == other.session_id:
            why = "replaced by a new connection of the same bot"
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2.0):
                    await other.goodbye(why)
            other.close(why)
            await lobby.remove(other)
            return
        if other.suspended:
            wait = max(1, int(other.resume_window))
            raise HandshakeRefused(
                Refusal.BUSY,
                pb.ERROR_CODE_RESOURCE_EXHAUSTED,
                f"bot {identity.name!r} of this token has a session waiting for its games to "
                f"resume (up to {other.resume_window:g} s); retry after {wait} s",
                wait,
            )
        raise HandshakeRefused(
            Refusal.DUPLICATE,
            pb.ERROR_CODE_DUPLICATE_SESSION,
            f"bot {identity.name!r} is already connected with this token (session "
            f"{other.session_id[:8]}); stop that copy first, give this one another name "
            "(--name), or ask the operator for --allow-duplicate-sessions",
        )


def casual_line(
    offered: frozenset[str],
    default_game: str,
    casual: set[str] | frozenset[str],
    asked: set[str],
    channel: str,
) -> str:
    """The Welcome's sentence on which casual games the bot will be paired for."""
    if asked:
        line = f"casual games: {', '.join(sorted(casual))} (as asked)"
    elif not casual:
        line = (
            f"no casual games: this server's default game is {default_game}, which "
            "the bot does not play"
        )
    else:
        others = sorted(offered - {default_game})
        how = f"; ask for {' or '.join(others)} with --game" if others else ""
        line = f"casual games: {default_game} (the server's default{how})"
    channel = channel.strip().lower()
    if channel:
        line += f"; channel {channel}: paired only with bots that join it (--channel {channel})"
    return line
