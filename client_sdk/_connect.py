"""The SDK's connection loop: connect, and on a failure decide whether to say why and stop,
or to wait and try again (a referee not reached yet, one that turned the stream away for now,
or a connection that was up and dropped).

:class:`Connector` is a part of :class:`client_sdk._session.Session`: it holds the loop, the
session the conversation on each stream.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import grpc

from client_sdk._admission import ADMISSION_BACKOFF, BUSY_STATUS, TurnedAway
from client_sdk._agent import GameResult
from client_sdk._link import KEEPALIVE_OPTIONS, Backoff, Dropped, SessionError
from client_sdk._tls import Tls, handshake_failure

_RETRY_STATUS = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}


#: How long a client that has never reached its referee keeps trying before it says so.
DEFAULT_WAIT_FOR_SERVER_S = 2.0
_FIRST_CONNECT_RETRY_S = 0.25


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def unreachable(server: str, tls: bool, code: grpc.StatusCode | None, detail: str) -> str:
    """The sentence for a referee never reached at ``server`` (every client command's)."""
    hint = "is referee serve running there, and is the port right?"
    if not tls and detail.rstrip().endswith("Socket closed"):
        # A plain-text client at a TLS port: the referee closes the connection unread.
        hint = "does the referee speak TLS there? then connect with --tls"
    name = code.name if code else "?"
    return f"cannot reach a referee at {server}: {name}: {_first_line(detail)} ({hint})"


class Connector:
    """The connection loop of a session (see the module's docstring)."""

    server: str
    tls: Tls | None
    credentials: grpc.ChannelCredentials | None
    log: Callable[[str], None]
    results: list[GameResult]
    _done: bool
    _welcomed: bool
    _link_welcomed: bool

    def _connect_once(self, backoff: Backoff) -> None:
        raise NotImplementedError

    def _end_unfinished(self, reason: str, lost: bool = False) -> None:
        raise NotImplementedError

    def _lost_for_good(self, message: str) -> SessionError:
        """The link is gone and will not be retried: the games still running here end as
        aborted (the referee may have scored them, or died with them: unknown here, so never
        counted as a loss), and the error carries every result of the session."""
        self._end_unfinished(
            "the connection to the referee was lost for good: the game's result is unknown"
        )
        return SessionError(message, results=self.results)

    def run(
        self,
        reconnect: bool = True,
        backoff: Backoff | None = None,
        wait_for_server: float = DEFAULT_WAIT_FOR_SERVER_S,
    ) -> list[GameResult]:
        backoff = backoff or Backoff()
        admission = Backoff(*ADMISSION_BACKOFF)
        first_deadline = time.monotonic() + wait_for_server
        while True:
            try:
                self._connect_once(backoff)
                return self.results
            except (grpc.RpcError, Dropped, TurnedAway) as exc:
                code = exc.code() if hasattr(exc, "code") else None
                detail = (exc.details() if hasattr(exc, "details") else str(exc)) or ""
                if self._done:
                    return self.results
                if not self._link_welcomed and (isinstance(exc, TurnedAway) or code in BUSY_STATUS):
                    # The referee was reached and turned the stream away for now (busy, full,
                    # restarting): say why and try again, patiently.
                    wait = exc.retry_after_s if isinstance(exc, TurnedAway) else 0.0
                    self._retry_admission(admission, detail, wait)
                    continue
                if not self._welcomed:
                    # A handshake that fails now fails again: say why at once.
                    self._check_handshake(code)
                    # Retries are for connections that were up: a referee that was never
                    # reached is most likely not running, or the address is wrong. It gets
                    # ``wait_for_server`` seconds (a server that is just starting), no more.
                    if code in _RETRY_STATUS and time.monotonic() < first_deadline:
                        time.sleep(_FIRST_CONNECT_RETRY_S)
                        continue
                    raise SessionError(self._unreachable(code, detail)) from None
                self._retry_link(reconnect, backoff, code, detail)

    def _unreachable(self, code: grpc.StatusCode | None, detail: str) -> str:
        return unreachable(self.server, self.tls is not None, code, detail)

    def _check_handshake(self, code: grpc.StatusCode | None) -> None:
        """A TLS connection the referee's port took but the handshake refused: a
        :class:`SessionError` naming the reason (expired, unknown CA, wrong host, ...)."""
        if code != grpc.StatusCode.UNAVAILABLE or self.tls is None:
            return
        why = handshake_failure(self.tls, self.server)
        if why is not None:
            raise SessionError(why) from None

    def _retry_admission(self, admission: Backoff, why: str, wait: float = 0.0) -> None:
        delay = admission.next_delay()
        if delay is None:
            raise self._lost_for_good(f"gave up joining the referee at {self.server}: {why}")
        delay = max(delay, wait)  # never sooner than the referee asked
        self.log(f"not admitted: {why}; retrying in {delay:.1f} s")
        time.sleep(delay)

    def _retry_link(
        self, reconnect: bool, backoff: Backoff, code: grpc.StatusCode | None, detail: str
    ) -> None:
        if not reconnect or code not in _RETRY_STATUS:
            raise self._lost_for_good(f"connection to {self.server} failed: {code} {detail}")
        delay = backoff.next_delay()
        if delay is None:
            raise self._lost_for_good(f"gave up reconnecting to {self.server}: {code} {detail}")
        self.log(
            f"connection lost ({code.name if code else '?'}: {detail}); retrying in {delay:.1f} s"
        )
        time.sleep(delay)

    def _channel(self) -> grpc.Channel:
        if self.credentials is not None:
            return grpc.secure_channel(self.server, self.credentials, options=KEEPALIVE_OPTIONS)
        return grpc.insecure_channel(self.server, options=KEEPALIVE_OPTIONS)
