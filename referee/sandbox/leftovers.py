"""Game folders a referee leaves behind when it dies without cleaning up (SIGKILL, a crash, a
power cut), and their removal by the next referee that starts.

Every per-game folder in the temp folder (a bot's copied code, its token, its socket, a server's
socket) is named for the process that made it: ``arena-bot-<pid>.<start>-XXXX``, where
``<start>`` is that process's start time (clock ticks since boot, from ``/proc``), so a pid
reused by another process is not mistaken for the owner. A folder whose owner no longer runs is
a leftover: :func:`sweep_leftovers` removes it (a referee, worker or runner does so once when it
starts); a live referee's folders are never touched. :func:`leftover_check` is the doctor's
check.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Leftover",
    "find_leftovers",
    "leftover_check",
    "owner_tag",
    "run_folder",
    "sweep_leftovers",
    "sweep_once",
]

#: The folders referees make, by name (the owner's tag follows the prefix).
_NAME = re.compile(r"^arena-(?:bot|token|game-sock|server)-(\d+)\.(\d+)-")


def _start_time(pid: int) -> int | None:
    """The start time of ``pid`` in clock ticks since boot, ``None`` when it does not run."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count from its end.
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return int(fields[19])  # field 22, starttime
    except (IndexError, ValueError):
        return None


def owner_tag() -> str:
    """This process's tag: ``<pid>.<start time>``."""
    return _tag(os.getpid())


@functools.cache
def _tag(pid: int) -> str:
    return f"{pid}.{_start_time(pid) or 0}"


def run_folder(prefix: str) -> Path:
    """A new private folder (mode 0700) in the temp folder, named ``<prefix><tag>-XXXX``."""
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{owner_tag()}-"))


@dataclass(frozen=True, slots=True)
class Leftover:
    """A game folder whose owner no longer runs."""

    path: Path
    owner_pid: int


def find_leftovers(root: Path | None = None) -> list[Leftover]:
    """The game folders in ``root`` (default: the temp folder) whose owner has died."""
    folder = Path(root or tempfile.gettempdir())
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = []
    for name in sorted(names):
        match = _NAME.match(name)
        if match is None:
            continue
        pid, start = int(match.group(1)), int(match.group(2))
        if _start_time(pid) == start:
            continue  # its owner still runs
        path = folder / name
        if path.is_dir() and not path.is_symlink():
            found.append(Leftover(path, pid))
    return found


def sweep_leftovers(root: Path | None = None) -> list[Path]:
    """Remove the game folders of dead referees from ``root``; returns what was removed."""
    removed = []
    for leftover in find_leftovers(root):
        shutil.rmtree(leftover.path, ignore_errors=True)
        if not leftover.path.exists():
            removed.append(leftover.path)
    return removed


@functools.cache
def sweep_once() -> list[Path]:
    """:func:`sweep_leftovers` of the temp folder, once per process (as it starts work)."""
    return sweep_leftovers()


def leftover_check(root: Path | None = None) -> tuple[bool, str]:
    """For ``referee doctor``: (fine, one line saying what was found)."""
    found = find_leftovers(root)
    where = root or Path(tempfile.gettempdir())
    if not found:
        return True, f"no game folders left behind by dead referees in {where}"
    pids = sorted({f.owner_pid for f in found})
    shown = ", ".join(str(p) for p in pids[:5]) + (" ..." if len(pids) > 5 else "")
    return False, (
        f"{len(found)} game folder(s) in {where} left behind by referee processes that no "
        f"longer run (pid {shown}); the next referee to start removes them"
    )
