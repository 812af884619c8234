"""The CPU weight of background games' bots, which their niceness alone does not give where the
kernel's autogroups are on.

With autogroups on (``/proc/sys/kernel/sched_autogroup_enabled`` = 1, most desktop and server
kernels) the scheduler first shares the CPU equally among sessions, then by niceness within
each. Every bot leads a session of its own (the sandbox's ``--new-session``), so a bot at
niceness 19 still weighs as much as the whole web front. The kernel puts only the tasks of the
root ``cpu`` cgroup in autogroups: a task in any other ``cpu`` cgroup is weighed by that
cgroup's ``cpu.shares`` (v1) or ``cpu.weight`` (v2). So a background game's bot (one launched
inside :func:`referee.sandbox.priority.background`, ``extra`` steps lower) is put in a ``cpu``
cgroup weighed as one task at niceness ``extra`` is (:func:`shares_for`: 110 of the default
1024 at +10):

* **cgroup v1, ``cpu`` a hierarchy of its own** (the ``cpuacct`` one elsewhere): one group per
  class, ``tetromino-bots-nice<extra>`` at the referee's own place in the ``cpu`` hierarchy,
  made once and kept (reused by every later bot of the class, by the next referee too). All the
  class's bots share its weight: together they weigh as one task at that niceness, however
  many play. The exec shim joins it with the bot's other cgroups; a warm sandbox, started
  before its game is known, is moved into it when handed over.
* **cgroup v1, ``cpu`` mounted with ``cpuacct``**: the bot's own ``cpuacct`` cgroup (already a
  ``cpu`` cgroup) gets the class's ``cpu.shares``; each bot weighs as one task at that
  niceness. It goes with the bot's cgroup.
* **cgroup v2** with the ``cpu`` controller delegated (listed in the parent's
  ``cgroup.subtree_control``): the bot's own cgroup gets the class's ``cpu.weight``.

Elsewhere (no writable ``cpu`` cgroup, the controller not delegated, ``TETROMINO_CGROUP=off``
or ``TETROMINO_BOT_CPU_GROUPS=off``) the bot keeps only its niceness, said once in the log.

A bot cannot leave its group: it runs without capabilities, as an unprivileged uid, in a
cgroup namespace of its own, and sees no cgroup file system.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

from referee.sandbox.cgroups import CgroupParent, _read, _write, v1_controller_parent

__all__ = [
    "CLASS_PREFIX",
    "CPU_GROUPS_ENV",
    "class_group",
    "detect_cpu_parent",
    "enabled",
    "move_into",
    "say_once",
    "shares_for",
    "weigh_own",
    "weight_for",
]

log = logging.getLogger(__name__)

#: Set to ``off`` to leave every bot in the referee's own ``cpu`` cgroup (niceness only).
CPU_GROUPS_ENV = "TETROMINO_BOT_CPU_GROUPS"
#: The name of a class's v1 ``cpu`` group, followed by its niceness step.
CLASS_PREFIX = "tetromino-bots-nice"
#: The kernel's weight of a task at niceness 0..19 (``sched_prio_to_weight``).
_NICE_WEIGHTS = (
    *(1024, 820, 655, 526, 423, 335, 272, 215, 172, 137),
    *(110, 87, 70, 56, 45, 36, 29, 23, 18, 15),
)
#: How many passes :func:`move_into` makes over a sandbox's processes (one forking meanwhile).
MOVE_PASSES = 5
_said: set[str] = set()


def say_once(message: str) -> None:
    """Log ``message`` as a warning, the first time only."""
    if message not in _said:
        _said.add(message)
        log.warning(message)


def shares_for(extra: int) -> int:
    """The v1 ``cpu.shares`` of a class ``extra`` steps of niceness lower (1024: a task at
    niceness 0, a session's weight under autogroups)."""
    return _NICE_WEIGHTS[min(len(_NICE_WEIGHTS) - 1, max(0, extra))]


def weight_for(extra: int) -> int:
    """The v2 ``cpu.weight`` of that class (100: the default, as 1024 shares)."""
    return max(1, round(shares_for(extra) * 100 / 1024))


def enabled() -> bool:
    """Whether bots may be given a ``cpu`` cgroup weight at all (the two switches)."""
    return all(
        os.environ.get(name, "").strip().lower() != "off"
        for name in (CPU_GROUPS_ENV, "TETROMINO_CGROUP")
    )


@cache
def detect_cpu_parent() -> CgroupParent | None:
    """The referee's own place in a v1 ``cpu`` hierarchy it may write to, or None (cached)."""
    if not enabled():
        return None
    return v1_controller_parent("cpu", "cpu.shares")


_classes: dict[tuple[Path, int], Path] = {}


def class_group(parent: CgroupParent, extra: int) -> Path | None:
    """The v1 ``cpu`` group of the class ``extra`` steps lower under ``parent``: made (or found)
    and given its shares once per process; None, said once, when it cannot be."""
    key = (parent.path, extra)
    if key in _classes:
        return _classes[key]
    path = parent.path / f"{CLASS_PREFIX}{extra}"
    try:
        path.mkdir(exist_ok=True)
        _write(path / "cpu.shares", str(shares_for(extra)))
    except OSError as e:
        say_once(f"background bots keep only their niceness (no cpu group {path}: {e})")
        return None
    _classes[key] = path
    return path


def weigh_own(path: Path, version: int, extra: int) -> bool:
    """Give the bot's own cgroup at ``path`` (v2, or v1 ``cpu`` with ``cpuacct``) the class's
    weight; whether it took (said once when not)."""
    if version == 2:
        parent_controls = (_read(path.parent / "cgroup.subtree_control") or "").split()
        if "cpu" not in parent_controls:
            say_once("background bots keep only their niceness (cpu not delegated on v2)")
            return False
        name, value = "cpu.weight", weight_for(extra)
    else:
        name, value = "cpu.shares", shares_for(extra)
    try:
        _write(path / name, str(value))
    except OSError as e:
        say_once(f"background bots keep only their niceness ({path / name}: {e})")
        return False
    return True


def move_into(group: Path, pids: Callable[[], Iterable[int]]) -> None:
    """Move the processes ``pids()`` lists into the v1 ``cpu`` ``group``, every thread of each
    (``cgroup.procs``); listed afresh each pass, so one forked meanwhile is found by the next."""
    moved: set[int] = set()
    for _ in range(MOVE_PASSES):
        todo = [pid for pid in pids() if pid not in moved]
        if not todo:
            return
        for pid in todo:
            moved.add(pid)
            with contextlib.suppress(OSError):  # gone meanwhile
                _write(group / "cgroup.procs", str(pid))
