"""Throttling failed logins: a leaky bucket per client address and per token id.

Every failed token check (malformed, unknown, wrong secret, revoked, expired) leaves one drop
in the bucket of the client's address and one in the bucket of the token id it named (the
public ``<id>`` of ``arena_<id>_<secret>``). The drops are poured when the attempt is admitted
and taken back when the token proves good: attempts still being checked count as failures, so
a burst of simultaneous wrong tokens cannot all slip past the check before the first of them
fails. Buckets leak at a steady rate. While either
bucket is full, further attempts from that address, or naming that token id, are refused at
once with ``RESOURCE_EXHAUSTED`` and the seconds until a drop has leaked, without looking the
token up: a flood of wrong tokens costs the server a dictionary look-up each, never a database
query, so valid logins from elsewhere go through at their usual speed.

A token this server has verified before (a bot reconnecting, a classmate behind the same NAT
who connected earlier) is not subject to the buckets; see :class:`referee.server.access.Gate`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote


@dataclass(frozen=True, slots=True)
class BucketSpec:
    """``capacity`` failures at once, then one more every ``1 / leak_per_s`` seconds."""

    capacity: float
    leak_per_s: float


#: An address may fail 30 times at once (a class behind one NAT starting with a stale token),
#: then once every 2 s.
PER_ADDRESS = BucketSpec(capacity=30.0, leak_per_s=0.5)
#: One token id may fail 10 times at once, then once every 6 s.
PER_TOKEN = BucketSpec(capacity=10.0, leak_per_s=1 / 6)
#: Buckets kept at most (an attacker cycling addresses or ids cannot grow memory without end).
MAX_BUCKETS = 50_000


class _Buckets:
    """Leaky buckets by key: ``key -> (level, time of level)``."""

    def __init__(self, spec: BucketSpec, clock: Callable[[], float]) -> None:
        self.spec = spec
        self._clock = clock
        self._levels: dict[str, tuple[float, float]] = {}

    def _level(self, key: str, now: float) -> float:
        level, then = self._levels.get(key, (0.0, now))
        return max(0.0, level - (now - then) * self.spec.leak_per_s)

    def wait(self, key: str) -> float:
        """Seconds until one more failure fits (0: it fits now)."""
        over = self._level(key, self._clock()) + 1.0 - self.spec.capacity
        return over / self.spec.leak_per_s if over > 0 else 0.0

    def pour(self, key: str, drops: float = 1.0) -> None:
        now = self._clock()
        level = min(max(0.0, self._level(key, now) + drops), self.spec.capacity + 1.0)
        self._levels[key] = (level, now)
        if len(self._levels) > MAX_BUCKETS:
            self._prune(now)

    def _prune(self, now: float) -> None:
        # Empty buckets first; then the oldest half (dicts keep insertion order).
        for key in [k for k in self._levels if self._level(k, now) == 0.0]:
            del self._levels[key]
        if len(self._levels) > MAX_BUCKETS:
            for key in list(self._levels)[: len(self._levels) // 2]:
                del self._levels[key]

    def __len__(self) -> int:
        return len(self._levels)


@dataclass(frozen=True, slots=True)
class Throttled:
    """Why an attempt was refused unexamined, and when to try again."""

    reason: str
    retry_after_s: int

    @property
    def message(self) -> str:
        return f"{self.reason}; retry after {self.retry_after_s} s"


class LoginThrottle:
    """Failed-login buckets per client address and per token id."""

    def __init__(
        self,
        per_address: BucketSpec = PER_ADDRESS,
        per_token: BucketSpec = PER_TOKEN,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.addresses = _Buckets(per_address, clock)
        self.token_ids = _Buckets(per_token, clock)
        #: Attempts refused unexamined so far (for metrics and tests).
        self.refused = 0

    def check(self, address: str, token_id: str) -> Throttled | None:
        """A :class:`Throttled` when the address or the token id has failed too often;
        otherwise the attempt is admitted and counted as a failure until :meth:`release`."""
        by_address = self.addresses.wait(address)
        by_token = self.token_ids.wait(token_id) if token_id else 0.0
        if by_address <= 0 and by_token <= 0:
            self.addresses.pour(address)
            if token_id:
                self.token_ids.pour(token_id)
            return None
        self.refused += 1
        if by_address >= by_token:
            reason = f"too many failed logins from {address}"
        else:
            reason = f"too many failed logins with token id {token_id}"
        return Throttled(reason, max(1, math.ceil(max(by_address, by_token))))

    def release(self, address: str, token_id: str) -> None:
        """An admitted attempt did not fail for its token (it was good, or the check itself
        broke): take its drops back."""
        self.addresses.pour(address, -1.0)
        if token_id:
            self.token_ids.pour(token_id, -1.0)


def peer_address(peer: str) -> str:
    """The client's address from a gRPC peer string, without its port: ``ipv4:1.2.3.4:5``
    gives ``1.2.3.4``, ``ipv6:[::1]:5`` gives ``::1``; a local socket gives ``local``."""
    kind, _, rest = peer.partition(":")
    rest = unquote(rest)  # gRPC writes ipv6:%5B::1%5D:5
    if kind == "ipv4":
        return rest.rsplit(":", 1)[0]
    if kind == "ipv6":
        host = rest.rsplit(":", 1)[0] if rest.startswith("[") else rest
        host = host.strip("[]")
        return host.removeprefix("::ffff:") if "." in host else host
    return "local" if kind == "unix" else (peer or "unknown")
