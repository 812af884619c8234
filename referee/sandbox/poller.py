"""One background thread that samples every supervised bot's memory on its own schedule.

The samples used to be taken by a task on the referee's event loop. When the loop was busy
(thirty bots launching at once, a slow record write), a fast allocator could pass the limit,
hit RLIMIT_DATA and die of a MemoryError before any sample saw it: the verdict stayed right
but the recorded peak was whatever the last sample had seen, sometimes a tenth of the limit.
A thread keeps sampling while the loop is busy: Python hands it the GIL at least every
switch interval (5 ms), and the sampling itself is /proc reads.

The thread only measures and kills; reaping and verdicts stay on the event loop (see
``BotProcess``), so the two never race on a pid or a pidfd.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Protocol

__all__ = ["Watched", "unwatch", "watch"]

log = logging.getLogger(__name__)


class Watched(Protocol):
    """What the poller needs of a supervised process."""

    poll_interval_s: float

    def poll_memory(self) -> bool:
        """Take one sample; return False once there is nothing left to watch."""
        ...


class _Poller:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._due: dict[Watched, float] = {}
        self._changed = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, item: Watched) -> None:
        with self._lock:
            self._due[item] = time.monotonic()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="bot-memory-poller", daemon=True
                )
                self._thread.start()
        self._changed.set()

    def unwatch(self, item: Watched) -> None:
        with self._lock:
            self._due.pop(item, None)

    def _run(self) -> None:
        while True:
            with self._lock:
                due = list(self._due.items())
            if not due:
                self._changed.wait(1.0)
                self._changed.clear()
                continue
            now = time.monotonic()
            for item, when in due:
                if when > now:
                    continue
                try:
                    keep = item.poll_memory()
                except Exception:
                    # A bug here must not stop the other bots' sampling; RLIMIT_DATA and the
                    # cgroup still hold for this one.
                    log.exception("memory sample failed; this bot is no longer polled")
                    keep = False
                with self._lock:
                    if item in self._due:
                        if keep:
                            self._due[item] = now + item.poll_interval_s
                        else:
                            del self._due[item]
            with self._lock:
                soonest = min(self._due.values(), default=now + 1.0)
            pause = soonest - time.monotonic()
            if pause > 0:
                self._changed.wait(pause)
                self._changed.clear()


_POLLER = _Poller()


def watch(item: Watched) -> None:
    """Start sampling ``item`` every ``item.poll_interval_s`` (first sample at once)."""
    _POLLER.watch(item)


def unwatch(item: Watched) -> None:
    """Stop sampling ``item`` (a sample in progress still finishes)."""
    _POLLER.unwatch(item)
