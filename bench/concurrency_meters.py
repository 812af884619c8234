"""What ``bench/concurrency.py`` measures in its own process (the server's memory, CPU time and
collector pauses), and the scheduling priority it gives the server and the bench bots."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import os
import time
from typing import Any


class Meter:
    """This process's resident memory and CPU time (the server runs in it)."""

    def __init__(self) -> None:
        import psutil

        self._proc = psutil.Process()
        self.peak_rss = 0

    def rss(self) -> int:
        rss = int(self._proc.memory_info().rss)
        self.peak_rss = max(self.peak_rss, rss)
        return rss

    def cpu_s(self) -> float:
        times = self._proc.cpu_times()
        return float(times.user + times.system)

    def loop_cpu_s(self) -> float:
        """The event loop's thread alone (gRPC polls on threads of its own): the part that
        cannot use a second core."""
        import threading

        main = threading.main_thread().native_id
        return sum(t.user_time + t.system_time for t in self._proc.threads() if t.id == main)

    async def sample(self, every: float = 0.5) -> None:
        while True:
            self.rss()
            await asyncio.sleep(every)


class GcPauses:
    """The garbage collector's pauses in this process (they stall the event loop), with the
    generation each one collected."""

    def __init__(self) -> None:
        self.pauses: list[float] = []
        self.by_generation: list[list[float]] = [[], [], []]
        self._started = 0.0
        gc.callbacks.append(self._note)

    def _note(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            pause = time.perf_counter() - self._started
            self.pauses.append(pause)
            self.by_generation[info["generation"]].append(pause)

    def summary(self) -> dict[str, Any]:
        return {
            "gc_pauses": len(self.pauses),
            "gc_max_pause_ms": round(max(self.pauses, default=0.0) * 1e3, 2),
            "gc_total_ms": round(sum(self.pauses) * 1e3, 1),
            "gc_full_collections": len(self.by_generation[2]),
            "gc_full_max_ms": round(max(self.by_generation[2], default=0.0) * 1e3, 2),
        }

    def close(self) -> None:
        gc.callbacks.remove(self._note)


#: The niceness the bench was started with: its children (bots, probe) run at it, whatever
#: ``--server-priority`` gives the server.
BASE_NICENESS = os.getpriority(os.PRIO_PROCESS, 0)


def raise_priority(levels: int, pid: int = 0) -> None:
    """Run process ``pid`` (0: this one) ``levels`` nice levels up. Call it before gRPC starts
    its threads: on Linux a thread's niceness is its own, inherited by the threads it starts.
    Where the kernel groups processes by session (autogroup), niceness only ranks a session's
    own processes, so the session's group is raised too: each bench bot process leads a
    session of its own; this process is in its caller's, whose group is put back on exit."""
    os.setpriority(os.PRIO_PROCESS, pid, BASE_NICENESS - levels)
    path = f"/proc/{pid or 'self'}/autogroup"
    try:
        with open(path) as group:
            before = group.read().split()[-1]  # "/autogroup-N nice K"
        _write_group(path, str(BASE_NICENESS - levels))
    except OSError:
        return  # no autogroup: plain niceness is enough
    if not pid:
        atexit.register(_write_group, path, before)


def _write_group(path: str, nice: str) -> None:
    with contextlib.suppress(OSError), open(path, "w") as group:
        group.write(nice)
