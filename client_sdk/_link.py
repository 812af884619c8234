"""The SDK's connection plumbing: keep-alive settings, back-off between attempts, the queue
of outgoing messages, and the errors a session ends with."""

from __future__ import annotations

import queue
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import grpc

from client_sdk._errors import SdkError
from client_sdk.proto import referee_pb2 as pb

if TYPE_CHECKING:
    from client_sdk._agent import GameResult

#: HTTP/2 keep-alive: ping every 20 s of silence, give up on the link after 10 s without an
#: answer. The referee must allow pings this often (it does: see ``docs/sdk.md``).
KEEPALIVE_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    # gRPC 1.6x+ waits this long for a ping's answer (default 60 s), whatever keepalive_timeout.
    ("grpc.http2.ping_timeout_ms", 10_000),
    ("grpc.max_receive_message_length", 16 * 2**20),
    # One connection attempt gives up after 3 s (gRPC's minimum connect timeout, 20 s by
    # default): an attempt whose SYN was lost while the link was down would otherwise wait out
    # TCP's SYN retries (1, 3, 7, 15 s) and come back after the referee's reconnect window.
    ("grpc.min_reconnect_backoff_ms", 3_000),
)


class SessionError(SdkError):
    """The referee refused the session (bad token, no common game...) or could not be reached.

    ``results``: the games of the session, in the order they ended, when it had any; games
    still unfinished when the connection was lost for good are among them as aborted (their
    result is the referee's, and unknown here).
    """

    def __init__(self, message: str = "", results: Sequence[GameResult] = ()) -> None:
        super().__init__(message)
        self.results = list(results)


@dataclass
class Backoff:
    """Exponential back-off with full jitter between reconnection attempts."""

    initial: float = 0.5
    maximum: float = 30.0
    attempts: int = 8
    _failures: int = field(default=0, init=False)

    def reset(self) -> None:
        self._failures = 0

    def next_delay(self) -> float | None:
        """Seconds to wait before the next attempt, or ``None`` when out of attempts."""
        if self._failures >= self.attempts:
            return None
        delay = min(self.maximum, self.initial * 2**self._failures)
        self._failures += 1
        return random.uniform(delay / 2, delay)


class Outbox:
    """The bot's half of the stream: messages queued here are sent in order."""

    _CLOSE = object()

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def send(self, message: pb.BotMessage) -> None:
        self._queue.put(message)

    def close(self) -> None:
        self._queue.put(self._CLOSE)

    def __iter__(self) -> Iterator[pb.BotMessage]:
        while True:
            item = self._queue.get()
            if item is self._CLOSE:
                return
            yield item


class Dropped(SdkError):
    """The stream ended without the referee saying goodbye."""

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "the referee closed the stream"
