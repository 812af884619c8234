"""Process-wide registry of live bots, killed synchronously if the referee exits without
stopping them (atexit), or when the referee calls ``kill_all_now()`` from its own handler.

A bot whose referee dies by SIGKILL is killed by the kernel instead (PR_SET_PDEATHSIG, set by
the exec shim), and stale cgroups are swept by the next referee.
"""

from __future__ import annotations

import atexit
import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.sandbox.process import BotProcess

__all__ = ["kill_all_now", "live_count", "register", "unregister"]

_LIVE: dict[int, BotProcess] = {}


def register(proc: BotProcess) -> None:
    """Track ``proc`` until it is released."""
    _LIVE[id(proc)] = proc


def unregister(proc: BotProcess) -> None:
    """Forget ``proc`` (it has been stopped and released)."""
    _LIVE.pop(id(proc), None)


def live_count() -> int:
    """How many launched bots have not been released."""
    return len(_LIVE)


def kill_all_now() -> int:
    """SIGKILL every bot not yet released, with its tree and cgroup; returns how many."""
    procs = list(_LIVE.values())
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.kill_now()
    _LIVE.clear()
    return len(procs)


atexit.register(kill_all_now)
