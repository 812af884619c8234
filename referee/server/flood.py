"""Flood control of one session's stream: which unrequested messages a bot may send.

Every message the referee writes earns the bot one reply. Beyond those, a token bucket
refilled by the time since the last message allows ``rate`` messages a second with bursts of
``burst``; and whatever the clock says, more than ``burst`` unrequested messages with no
message of the referee's in between are a flood. That second rule keeps the verdict the same on
a busy server: a referee that reads a flood slowly (its reads wait for the CPU) sees time pass
between the messages, which alone would refill the bucket as fast as they are read.
"""

from __future__ import annotations

__all__ = ["FloodGate"]


class FloodGate:
    """The flood rule of one session; the caller passes the monotonic clock's readings."""

    __slots__ = ("_credits", "_refilled", "_tokens", "_unrequested", "burst", "rate")

    def __init__(self, rate: float, now: float) -> None:
        self.rate = rate
        self.burst = 2 * rate
        self._tokens = self.burst
        self._refilled = now
        #: Replies earned by messages the referee sent.
        self._credits = 0
        #: Unrequested messages since the referee's last message.
        self._unrequested = 0

    def sent(self) -> None:
        """The referee wrote a message: the bot may reply once more."""
        self._credits += 1
        self._unrequested = 0

    def admit(self, received: float) -> bool:
        """Whether a message read at ``received`` is within the rule (``False``: a flood)."""
        if self._credits > 0:
            self._credits -= 1
            return True
        self._unrequested += 1
        tokens = self._tokens + (received - self._refilled) * self.rate
        self._refilled = received
        if tokens < 1.0 or self._unrequested > self.burst:
            return False
        self._tokens = min(tokens, self.burst) - 1.0
        return True

    def sentence(self) -> str:
        """What a flood is, for the verdict."""
        return (
            f"flooded its stream: more than {self.burst:.0f} unrequested messages at once "
            f"(at most {self.rate:.0f} per second are allowed)"
        )
