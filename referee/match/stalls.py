"""The referee's own stalls: time during which it was not running is not a bot's time.

A referee process can be paused from outside (SIGSTOP, a VM pause, a long collector pass, a
machine so loaded that it is not scheduled). Meanwhile the bot on move may have answered long
ago; its answer waits in a socket, and a wall clock read afterwards would charge it the pause.

:class:`StallWatch` is a loop-lag watch: one task per event loop wakes every ``tick`` seconds
of the monotonic clock and notes every wake that came more than ``margin`` late as a stall
(the lateness beyond the margin: never more than was really lost). A runner asks
:meth:`StallWatch.stalled_between` how much of a move's wall time was stall; the question
first looks at the time since the last wake itself, so a stall that has just ended counts even
when the runner runs before the watch's own task after the pause.

Only a stall that can have delayed what the runner noticed counts: one still going on, or
that ended at most ``slack`` before (an answer that arrived during a pause is read as soon as
the referee runs again). A stall that ended long before an answer was read fell in the bot's
own thinking time and delayed nothing: that time stays the bot's.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
import weakref

__all__ = ["DEFAULT_MARGIN_S", "DEFAULT_TICK_S", "StallWatch", "stall_watch"]

#: How often the watch wakes.
DEFAULT_TICK_S = 0.05
#: How late a wake may be before the lateness (beyond this margin) counts as a stall: normal
#: scheduling jitter on a busy machine stays under it, and the grace of a clock covers it.
DEFAULT_MARGIN_S = 0.1
#: How soon after a stall an answer read counts as one that waited out the stall.
DEFAULT_SLACK_S = 0.25
#: Stalls remembered (older ones end before any move still being timed).
_KEPT = 256


class StallWatch:
    """Notes the intervals (monotonic seconds) during which the loop it runs on did not run."""

    def __init__(
        self,
        tick: float = DEFAULT_TICK_S,
        margin: float = DEFAULT_MARGIN_S,
        slack: float = DEFAULT_SLACK_S,
    ) -> None:
        self.tick = tick
        self.margin = margin
        self.slack = slack
        self.stalls: collections.deque[tuple[float, float]] = collections.deque(maxlen=_KEPT)
        self._last = time.monotonic()
        self._users = 0
        self._task: asyncio.Task[None] | None = None

    def observe(self, now: float | None = None) -> None:
        """Note a stall if the last wake is overdue by more than the margin (called by the
        watch's own task, and before every question)."""
        now = time.monotonic() if now is None else now
        late = now - self._last - self.tick
        if late > self.margin:
            self.stalls.append((now - (late - self.margin), now))
            self._last = now
        elif now > self._last + self.tick:
            self._last = now

    def stalled_between(self, start: float, end: float, now: float | None = None) -> float:
        """Seconds of stall within ``[start, end]`` (monotonic times) that can have delayed
        what was noticed at ``end``: stalls going on at ``end`` or ended at most ``slack``
        before it, as known at ``now`` (default: the monotonic clock's now)."""
        return self._overlap(start, end, now, end - self.slack)

    def total_between(self, start: float, end: float, now: float | None = None) -> float:
        """Every second of stall within ``[start, end]`` (for the record of a game)."""
        return self._overlap(start, end, now, start)

    def _overlap(self, start: float, end: float, now: float | None, ended_after: float) -> float:
        self.observe(now)
        total = 0.0
        for begin, finish in reversed(self.stalls):
            if finish <= start:
                break
            if finish >= ended_after:
                total += max(0.0, min(end, finish) - max(start, begin))
        return total

    @property
    def total(self) -> float:
        """Seconds of stall remembered."""
        return sum(finish - begin for begin, finish in self.stalls)

    # -- the watch's task, shared by every game on the loop -----------------------------------

    def acquire(self) -> None:
        """A game starts using the watch: its task runs while any game does."""
        self._users += 1
        if self._task is None or self._task.done():
            self._last = time.monotonic()
            self._task = asyncio.get_running_loop().create_task(self._run(), name="stall-watch")

    def release(self) -> None:
        """A game is done with the watch."""
        self._users = max(0, self._users - 1)
        if self._users == 0 and self._task is not None:
            self._task.cancel()
            self._task = None

    async def _run(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            while True:
                await asyncio.sleep(self.tick)
                self.observe()


_watches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, StallWatch] = (
    weakref.WeakKeyDictionary()
)


def stall_watch() -> StallWatch:
    """The watch of the running event loop (made on first use)."""
    loop = asyncio.get_running_loop()
    watch = _watches.get(loop)
    if watch is None:
        watch = _watches[loop] = StallWatch()
    return watch
