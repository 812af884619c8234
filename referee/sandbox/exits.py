"""How a bot ended, in one sentence for the game record, and whether it broke its memory limit
(the facts settled once its main process has exited)."""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING, Literal

from referee.sandbox.memory import format_mb, looks_like_memory_error

if TYPE_CHECKING:
    from referee.sandbox.runfacts import BotRun

__all__ = ["MemoryVerdict", "describe_exit", "describe_rc", "judge_memory", "unwrap_status"]

#: Why a bot was judged over its memory limit.
MemoryVerdict = Literal["rss", "cgroup_oom", "memory_error"]


def unwrap_status(rc: int, wrapped: bool) -> int:
    """The bot's own exit status: a sandbox wrapper reports death by signal N as 128 + N."""
    if wrapped and 128 < rc <= 128 + 64:
        return -(rc - 128)
    return rc


def describe_rc(rc: int) -> str:
    if rc >= 0:
        return f"exited with code {rc}"
    sig = -rc
    try:
        name = signal.Signals(sig).name
    except ValueError:
        return f"killed by signal {sig}"
    desc = signal.strsignal(sig)
    return f"killed by signal {name} ({desc.lower()})" if desc else f"killed by signal {name}"


def judge_memory(proc: BotRun, output_tail: bytes) -> MemoryVerdict | None:
    """After exit: over the limit by the cgroup's OOM killer, by its peak, or by a refused
    allocation that killed it (``MemoryError`` at the end of its output)?"""
    if proc.policy is None:
        return None
    cgroup = proc.cgroup
    if cgroup is not None and cgroup.oom_kills():
        return "cgroup_oom"
    if proc.peak_rss_bytes > proc.policy.limit_bytes:
        return "rss"
    if proc.returncode not in (None, 0) and looks_like_memory_error(output_tail):
        return "memory_error"
    return None


def describe_exit(proc: BotRun, tasks_refused: int, stop_signal: int | None) -> str:
    """One sentence about how the bot ended, for the game record."""
    if proc.running:
        return "still running"
    if proc.memory_exceeded and proc.policy is not None:
        limit = proc.policy.label()
        peak = format_mb(proc.peak_bytes)
        if proc.memory_verdict == "memory_error":
            return (
                f"memory limit {limit} exceeded: an allocation was refused "
                f"(MemoryError, peak {peak})"
            )
        if proc.memory_verdict == "cgroup_oom":
            return f"killed: memory limit {limit} exceeded (peak {peak}, killed by the kernel)"
        return f"killed: memory limit {limit} exceeded (peak {peak})"
    rc = proc.returncode
    if rc is None:
        return "exit status unknown (reaped by someone else)"
    if tasks_refused and stop_signal is None:
        return (
            f"{describe_rc(rc)} after reaching its limit of {proc.max_tasks} processes "
            f"and threads ({tasks_refused} refused)"
        )
    if stop_signal is not None:
        how = "SIGTERM" if stop_signal == signal.SIGTERM else "SIGKILL after grace"
        if rc == -stop_signal:
            return f"stopped by the referee ({how})"
        return f"{describe_rc(rc)} after the referee asked it to stop ({how})"
    return describe_rc(rc)
