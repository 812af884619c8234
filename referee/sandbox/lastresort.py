"""Process-wide registry of live bots, killed synchronously if the referee exits without
stopping them (atexit), or when the referee calls ``kill_all_now()`` from its own handler.

A bot whose referee dies by SIGKILL is killed by the kernel instead (PR_SET_PDEATHSIG, set by
the exec shim), and stale cgroups are swept by the next referee.
"""

from __future__ import annotations

import atexit
import contextlib
from typing import Protocol

__all__ = ["Killable", "kill_all_now", "live_count", "register", "unregister"]


class Killable(Protocol):
    """A launched bot (a :class:`~referee.sandbox.process.BotProcess`), as the registry sees it."""

    def kill_now(self) -> None:
        """SIGKILL the bot with its tree and cgroup, synchronously."""


_LIVE: dict[int, Killable] = {}


def register(proc: Killable) -> None:
    """Track ``proc`` until it is released."""
    _LIVE[id(proc)] = proc


def unregister(proc: Killable) -> None:
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
