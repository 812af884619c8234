"""What is known of one launched bot's run: its limits, how it ended, its memory peaks, its
output, and what follows from them (whether it broke its memory limit, how it ended in one
sentence). :class:`~referee.sandbox.process.BotProcess` runs the bot and fills these in; the
game's record reads them."""

from __future__ import annotations

import asyncio
import signal
import time

from referee.sandbox.botgroups import BotCgroups
from referee.sandbox.cgroups import MemoryCgroup
from referee.sandbox.exits import MemoryVerdict, describe_rc
from referee.sandbox.memory import MemoryPolicy, format_mb, looks_like_memory_error
from referee.sandbox.output import OutputPipe

__all__ = ["BotRun"]


class BotRun:
    """The facts of a bot's run, as its process supervisor records them."""

    def __init__(self) -> None:
        self.argv: tuple[str, ...] = ()
        self.policy: MemoryPolicy | None = None
        self.returncode: int | None = None
        self.memory_exceeded = False
        self.memory_verdict: MemoryVerdict | None = None
        #: Set as soon as the bot is judged over its memory limit (before it is dead).
        self.memory_exceeded_event = asyncio.Event()
        #: Set once the bot's main process has exited and its verdict facts are final.
        self.exited_event = asyncio.Event()
        self.started_at = time.monotonic()
        self.ended_at: float | None = None
        self.samples = 0
        self.sample_time_s = 0.0
        self._peak_tree_rss = 0
        self._peak_hwm = 0
        self._cgroup_peak: int | None = None
        self._stop_signal: int | None = None
        self._output: OutputPipe | None = None
        self._groups = BotCgroups()
        self._cgroup_joined = False
        self._tasks_refused_seen = 0
        self._closed = False

    @property
    def running(self) -> bool:
        """Whether the main process has not exited yet."""
        return not self.exited_event.is_set()

    @property
    def stop_requested(self) -> bool:
        """Whether ``stop()`` signalled the bot before it exited on its own."""
        return self._stop_signal is not None

    @property
    def peak_rss_bytes(self) -> int:
        """Peak resident memory: the larger of the polled tree sum and any process's own high
        water mark (VmHWM).

        wait4()'s ru_maxrss is deliberately not used: the bot is spawned with vfork(), and at
        exec the kernel folds the *parent's* high-water RSS into the child's maxrss, so a
        referee that has grown past the limit would see every bot "exceed" it."""
        return max(self._peak_tree_rss, self._peak_hwm)

    @property
    def peak_bytes(self) -> int:
        """The best evidence of the bot's peak: its resident peak, or the cgroup's own peak
        charge when that is higher (the kernel sees allocations between two polls)."""
        return max(self.peak_rss_bytes, self.cgroup_peak_bytes or 0)

    @property
    def max_tasks(self) -> int | None:
        """The cap on the bot's processes and threads, when a cgroup enforces one."""
        return self._groups.max_tasks

    @property
    def cgroup(self) -> MemoryCgroup | None:
        """The bot's memory cgroup, if one was created (removed again by ``stop()``)."""
        return self._groups.memory

    @property
    def cgroup_peak_bytes(self) -> int | None:
        """The cgroup's own peak charge (includes page cache), when a cgroup was used."""
        return self._cgroup_peak

    @property
    def tasks_refused(self) -> int:
        """How many forks or thread starts the task cap refused (0 without a cap)."""
        if self._closed:  # the cgroups are gone; this is what they said last
            return self._tasks_refused_seen
        return self._groups.tasks_refused()

    @property
    def measurement(self) -> str:
        """How memory was measured and enforced, e.g. ``rlimit_data+rss_poll+cgroup_v1``."""
        parts = ["rlimit_data", "rss_poll"] if self.policy is not None else ["rss_poll"]
        if self._groups.memory is not None and self._cgroup_joined:
            parts.append(self._groups.memory.parent.label)
        return "+".join(parts)

    @property
    def duration_s(self) -> float:
        """Wall time from launch to exit (or to now)."""
        end = self.ended_at if self.ended_at is not None else time.monotonic()
        return end - self.started_at

    def stderr_bytes(self) -> bytes:
        """The captured output (bounded: head and tail, with a marker for what was dropped)."""
        return self._output.capture.getvalue() if self._output else b""

    def stderr_text(self) -> str:
        """The captured output as text."""
        return self._output.capture.text() if self._output else ""

    @property
    def stderr_dropped_bytes(self) -> int:
        """How many bytes of output the capture dropped."""
        return self._output.capture.dropped_bytes if self._output else 0

    def judge_memory(self, output_tail: bytes) -> MemoryVerdict | None:
        """After exit: over the limit by the cgroup's OOM killer, by its peak, or by a refused
        allocation that killed it (``MemoryError`` at the end of its output)?"""
        if self.policy is None:
            return None
        cgroup = self.cgroup
        if cgroup is not None and cgroup.oom_kills():
            return "cgroup_oom"
        if self.peak_rss_bytes > self.policy.limit_bytes:
            return "rss"
        if self.returncode not in (None, 0) and looks_like_memory_error(output_tail):
            return "memory_error"
        return None

    def exit_description(self) -> str:
        """One sentence about how the bot ended, for the game record."""
        if self.running:
            return "still running"
        if self.memory_exceeded and self.policy is not None:
            limit = self.policy.label()
            peak = format_mb(self.peak_bytes)
            if self.memory_verdict == "memory_error":
                return (
                    f"memory limit {limit} exceeded: an allocation was refused "
                    f"(MemoryError, peak {peak})"
                )
            if self.memory_verdict == "cgroup_oom":
                return f"killed: memory limit {limit} exceeded (peak {peak}, killed by the kernel)"
            return f"killed: memory limit {limit} exceeded (peak {peak})"
        rc = self.returncode
        if rc is None:
            return "exit status unknown (reaped by someone else)"
        tasks_refused, stop_signal = self._tasks_refused_seen, self._stop_signal
        if tasks_refused and stop_signal is None:
            return (
                f"{describe_rc(rc)} after reaching its limit of {self.max_tasks} processes "
                f"and threads ({tasks_refused} refused)"
            )
        if stop_signal is not None:
            how = "SIGTERM" if stop_signal == signal.SIGTERM else "SIGKILL after grace"
            if rc == -stop_signal:
                return f"stopped by the referee ({how})"
            return f"{describe_rc(rc)} after the referee asked it to stop ({how})"
        return describe_rc(rc)
