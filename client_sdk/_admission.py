"""Getting admitted by a busy referee: which handshake failures are worth another try, and a
watch on the handshake so a referee that never answers the Hello does not hang the bot.

A referee that a whole class connects to at once may be full, draining for a restart, slow to
check tokens, or (in gRPC's own queue) not yet ready for the stream. Each of those says why
(an ``Error`` before the ``Welcome``, or a gRPC status of ``RESOURCE_EXHAUSTED``/``CANCELLED``
from a server that was reached): the SDK logs the reason and tries again with back-off. A
refusal that another try cannot fix (bad token, protocol, no common game, a second copy of a
bot already connected with the same token) ends the bot at once with the referee's reason.
A throttled or busy refusal says how long to wait (``Error.retry_after_s``): the SDK waits
at least that long, so a bot with a mistyped token backs off instead of hammering the server.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import grpc

from client_sdk._errors import SdkError
from client_sdk.proto import referee_pb2 as pb

#: No Welcome this long after the Hello: the attempt is abandoned and tried again.
HANDSHAKE_TIMEOUT_S = 30.0

#: Refusals another attempt cannot fix.
FINAL_REFUSALS = frozenset(
    {
        pb.ERROR_CODE_UNAUTHENTICATED,
        pb.ERROR_CODE_UNSUPPORTED_PROTOCOL,
        pb.ERROR_CODE_NO_GAMES,
        pb.ERROR_CODE_DUPLICATE_SESSION,
    }
)

#: gRPC statuses with which a referee that was reached turns a new stream away while busy
#: (``CANCELLED``: gRPC core refused the stream before the referee's handler saw it;
#: ``INTERNAL``: under load, a busy refusal that ends the stream at once can reach the client
#: as a stream reset instead of the referee's message).
BUSY_STATUS = frozenset(
    {grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.CANCELLED, grpc.StatusCode.INTERNAL}
)


#: Back-off for getting admitted: patient (about 5 minutes in all), since a class connecting
#: at once may find the referee busy for a while: (initial s, maximum s, attempts).
ADMISSION_BACKOFF = (1.0, 60.0, 10)


class TurnedAway(SdkError):
    """The referee turned the handshake away for a reason that may pass (busy, full, too many
    failed logins, ...); ``retry_after_s``: the referee's own word on when to try again."""

    def __init__(self, reason: str, retry_after_s: float = 0.0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after_s = retry_after_s

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.RESOURCE_EXHAUSTED

    def details(self) -> str:
        return self.reason


def refusal(error: pb.Error) -> TurnedAway | None:
    """The retryable :class:`TurnedAway` for an ``Error`` received before the Welcome, or
    ``None`` when it is final."""
    if error.code in FINAL_REFUSALS:
        return None
    name = pb.ErrorCode.Name(error.code).removeprefix("ERROR_CODE_")
    return TurnedAway(
        f"the referee refused the session ({name}: {error.message})", error.retry_after_s
    )


def _ignore() -> None:
    """What a stopped watch would cancel: nothing."""


class HandshakeWatch:
    """Cancels a stream (via ``cancel``) when no Welcome came within ``timeout`` seconds."""

    def __init__(self, cancel: Callable[[], object], timeout: float = HANDSHAKE_TIMEOUT_S):
        self.timeout = timeout
        self.fired = False
        self._cancel = cancel
        self._timer = threading.Timer(timeout, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        self.fired = True
        self._cancel()

    def welcomed(self) -> None:
        self._timer.cancel()

    def stop(self) -> None:
        self._timer.cancel()
        # The timer thread may outlive the stream by a moment: it must not keep the call alive.
        self._cancel = _ignore

    def refused(self) -> TurnedAway:
        return TurnedAway(
            f"no Welcome within {self.timeout:g} s of the Hello (the referee is busy)"
        )
