"""The CPU priority a launched bot gets, by the kind of game it plays.

A student waiting for an upload's first check needs its verdict in seconds, while a full
validation game or a ladder game can take whatever CPU is left: on a two-core server both
compete for the same cores. Work that can wait runs its launches inside :func:`background`,
and their bots start at :data:`BACKGROUND_NICE` above the referee's own niceness (capped at
19); every other launch gets the referee's own niceness (0 usually, 10 under ``nice -n 10
referee serve``). Niceness only orders who runs when the CPU is short; an idle machine gives
a background bot the whole core, and on a CPU clock (docs/limits.md) a bot is charged what it
used, not how long it waited, so its verdict does not depend on its priority.

The rule is read where a bot is launched (:func:`launch_niceness`), from a context variable:
tasks started inside the block (a game's referee, its watchers) inherit it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = [
    "BACKGROUND_NICE",
    "MAX_NICE",
    "background",
    "launch_class",
    "launch_niceness",
    "own_niceness",
]

#: How much lower than the referee's the bots of background games run (full validation
#: games, the ladder): when the CPU is short a bot at +10 gets about a tenth of what one at
#: the referee's own priority gets (the kernel's weights 110 and 1024).
BACKGROUND_NICE = 10
#: The lowest priority there is.
MAX_NICE = 19

_EXTRA: ContextVar[int] = ContextVar("tetromino_bot_extra_nice", default=0)


@contextlib.contextmanager
def background(extra: int = BACKGROUND_NICE) -> Iterator[None]:
    """Bots launched inside the block (and in tasks started in it) run ``extra`` above the
    referee's own niceness."""
    token = _EXTRA.set(max(0, extra))
    try:
        yield
    finally:
        _EXTRA.reset(token)


def own_niceness() -> int:
    """The referee's niceness (its calling thread's: Linux keeps it per thread)."""
    return os.getpriority(os.PRIO_PROCESS, 0)


def launch_class() -> int:
    """How many steps of niceness below the referee's a bot launched here plays (0: at the
    referee's own): the ``cpu`` cgroup weight it is given (:mod:`.cpuweight`)."""
    return _EXTRA.get()


def launch_niceness() -> int | None:
    """The niceness a bot launched here gets, or ``None`` (the referee's own: inherited)."""
    extra = _EXTRA.get()
    if extra <= 0:
        return None
    return min(MAX_NICE, own_niceness() + extra)
