"""Supervision of bot processes the referee launches: memory limits, output capture, cleanup.

See docs/limits.md for how memory (and the number of processes and threads) is measured
and enforced.
"""

from referee.sandbox.cgroups import (
    CgroupParent,
    MemoryCgroup,
    TaskCgroup,
    detect_cgroup_parent,
    detect_pids_parent,
)
from referee.sandbox.group import SupervisorGroup
from referee.sandbox.lastresort import kill_all_now, live_count
from referee.sandbox.memory import MB, MemoryPolicy, format_mb, looks_like_memory_error
from referee.sandbox.process import DEFAULT_MAX_TASKS, BotProcess, MemoryVerdict, OutputMode
from referee.sandbox.stderr import BoundedCapture

__all__ = [
    "DEFAULT_MAX_TASKS",
    "MB",
    "BotProcess",
    "BoundedCapture",
    "CgroupParent",
    "MemoryCgroup",
    "MemoryPolicy",
    "MemoryVerdict",
    "OutputMode",
    "SupervisorGroup",
    "TaskCgroup",
    "detect_cgroup_parent",
    "detect_pids_parent",
    "format_mb",
    "kill_all_now",
    "live_count",
    "looks_like_memory_error",
]
