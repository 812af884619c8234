"""A bot's exit status as the referee reads it: unwrapped from a sandbox wrapper's, in words for
the game record; and the reasons a bot is judged over its memory limit."""

from __future__ import annotations

import signal
from typing import Literal

__all__ = ["MemoryVerdict", "describe_rc", "unwrap_status"]

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
