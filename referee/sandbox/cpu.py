"""How much CPU time a launched bot has used: from its own cgroup where it has one, else from
its process tree.

A CPU clock (docs/limits.md) charges a bot the CPU its processes used, so the figure must be
cumulative, monotonic and cheap to read once per move:

* **cgroup**: the kernel's own count for every task that ever ran in the bot's cgroup, exited
  ones included, in nanoseconds: ``cpu.stat`` ``usage_usec`` on cgroup v2 (the bot's memory
  cgroup; the file exists whether or not the ``cpu`` controller is enabled) or
  ``cpuacct.usage`` of a ``cpuacct`` cgroup of its own on v1 (:class:`CpuCgroup`).
* **process tree** (no usable cgroup): user plus system time of the bot's processes and of the
  children they reaped, from ``/proc/<pid>/stat`` (what psutil reads) at clock-tick resolution
  (10 ms). A process that died unreaped keeps its last reading, so the total never goes down.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Literal

from referee.sandbox.cgroups import (
    CGROUP_NAME_PREFIX,
    CgroupParent,
    MemoryCgroup,
    _join,
    _new_child,
    _own_cgroup_texts,
    parse_mountinfo,
    parse_proc_cgroup,
    v1_controller_parent,
)
from referee.sandbox.memory import list_children

__all__ = [
    "BotCpu",
    "CpuCgroup",
    "TreeCpu",
    "bot_cgroup_of",
    "detect_cpuacct_parent",
    "read_cgroup_cpu",
]


def read_cgroup_cpu(path: Path, version: int) -> float | None:
    """CPU seconds used by every task that ran in the cgroup at ``path`` (``None``: the kernel
    keeps no such count there, or the cgroup is gone)."""
    try:
        if version == 2:
            fd = os.open(path / "cpu.stat", os.O_RDONLY)
            try:
                data = os.read(fd, 4096)
            finally:
                os.close(fd)
            for line in data.splitlines():
                if line.startswith(b"usage_usec "):
                    return int(line[11:]) / 1e6
            return None
        fd = os.open(path / "cpuacct.usage", os.O_RDONLY)
        try:
            return int(os.read(fd, 64)) / 1e9
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return None


def bot_cgroup_of(pid: int) -> tuple[Path, Literal[1, 2]] | None:
    """The cgroup of its own that counts the CPU time of the bot process ``pid`` (a v2 cgroup,
    or a v1 ``cpuacct`` one, made for it by the launcher), or ``None``."""
    own = _own_cgroup_texts()
    try:
        text = Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return None
    if own is None:
        return None
    v1_paths, v2_path = parse_proc_cgroup(text)
    mounts = parse_mountinfo(own[1])
    wanted: list[tuple[str, str | None, Literal[1, 2]]] = [
        ("cgroup2", v2_path, 2),
        ("cpuacct", v1_paths.get("cpuacct"), 1),
    ]
    for kind, path, version in wanted:
        if path is None or not Path(path).name.startswith(CGROUP_NAME_PREFIX):
            continue
        for mount in mounts:
            fits = mount.fstype == kind or (kind == "cpuacct" and kind in mount.super_options)
            d = _join(mount, path) if fits else None
            if d is not None and read_cgroup_cpu(d, version) is not None:
                return d, version
    return None


@cache
def detect_cpuacct_parent() -> CgroupParent | None:
    """Where a v1 ``cpuacct`` cgroup per bot can be made, or None (cached).

    Only v1 needs one: on v2 every cgroup counts its CPU time, the bot's memory cgroup too.
    """
    return v1_controller_parent("cpuacct", "cpuacct.usage")


class CpuCgroup(MemoryCgroup):
    """One bot's cgroup in the v1 ``cpuacct`` hierarchy, counting its CPU time (read by
    :class:`BotCpu`).

    The directory handling (joining, listing, killing, removal, stale sweeps) is the memory
    cgroup's; nothing is written into it, it only counts.
    """

    @classmethod
    def create_cpu(cls, parent: CgroupParent) -> CpuCgroup:
        """Make a fresh child of ``parent`` (OSError on failure)."""
        return cls(parent, _new_child(parent))


class TreeCpu:
    """CPU seconds of a process tree rooted at ``root_pid``, for bots without a cgroup.

    Each process's own and reaped children's user and system time come from its
    ``/proc/<pid>/stat`` (as psutil reads them), through a descriptor kept open per process: a
    reading is one ``pread`` per process, and a descriptor still names its process after the
    pid is reused. The tree is walked again (from its root, plus ``extra`` pids known to belong
    to the bot) at most every ``walk_s`` seconds: a process born since is found by a later walk
    with all its time. A process gone since the last reading keeps its last figure unless its
    parent is still in the tree (the parent's children times hold it now, exactly), so nothing
    is counted twice or lost to a reap.
    """

    def __init__(self, root_pid: int, walk_s: float = 0.25) -> None:
        self.root_pid = root_pid
        self.walk_s = walk_s
        self._fds: dict[int, int] = {}
        #: pid -> (parent pid, last total of its own and its reaped children's times)
        self._last: dict[int, tuple[int, float]] = {}
        self._walked = -math.inf
        self._gone = 0.0
        self._total = 0.0

    def seconds(self, extra: Iterable[int] = ()) -> float:
        """The tree's CPU seconds so far (never less than at the previous reading)."""
        now = time.monotonic()
        if now - self._walked >= self.walk_s:
            self._walked = now
            for pid in self._walk(extra):
                if pid not in self._fds:
                    with contextlib.suppress(OSError):
                        self._fds[pid] = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        seen: dict[int, tuple[int, float]] = {}
        for pid, fd in list(self._fds.items()):
            reading = _read_stat(fd)
            if reading is None:
                os.close(self._fds.pop(pid))
            else:
                seen[pid] = reading
        for pid, (parent, last) in self._last.items():
            if pid not in seen and parent not in seen:
                self._gone += last
        self._last = seen
        total = self._gone + sum(value for _, value in seen.values())
        self._total = max(self._total, total)
        return self._total

    def close(self) -> None:
        """Close every descriptor (the last reading stays)."""
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def _walk(self, extra: Iterable[int]) -> set[int]:
        found: set[int] = set()
        stack = [self.root_pid, *extra]
        while stack:
            pid = stack.pop()
            if pid in found:
                continue
            found.add(pid)
            stack.extend(list_children(pid))
        return found


_TICK = os.sysconf("SC_CLK_TCK")


def _read_stat(fd: int) -> tuple[int, float] | None:
    """(parent pid, own plus reaped children's CPU seconds) from a ``/proc/<pid>/stat``
    descriptor, or ``None`` once the process is gone."""
    try:
        data = os.pread(fd, 1024, 0)
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    if len(fields) < 15:
        return None
    ticks = int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
    return int(fields[1]), ticks / _TICK


class BotCpu:
    """The CPU seconds of one launched bot (``pid``: its main process): from its own cgroup
    where it has one, else from its process tree. Never less than the previous reading; the
    last one once the bot is gone or :meth:`close` was called.

    The cgroup is found at the first reading, so take it once the bot runs (a game's start: the
    launcher's shim joins the cgroups just after the process starts); its counter file is kept
    open, so a reading is one ``pread``."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._version: Literal[1, 2] | None = None
        self._fd: int | None = None
        self._tree: TreeCpu | None = None
        self._seen = 0.0
        self._closed = False

    @property
    def method(self) -> str:
        """``cgroup_v1``, ``cgroup_v2`` or ``process_tree``."""
        return "process_tree" if self._version is None else f"cgroup_v{self._version}"

    def seconds(self) -> float:
        if self._closed:
            return self._seen
        if self._fd is None and self._tree is None:
            self._open()
        counted: float | None
        if self._fd is not None:
            counted = _read_counter(self._fd, self._version == 2)
        else:
            assert self._tree is not None
            counted = self._tree.seconds()
        if counted is not None:
            self._seen = max(self._seen, counted)
        return self._seen

    def close(self) -> None:
        """Take a last reading and release the counter (before the cgroup is removed)."""
        if self._closed:
            return
        self.seconds()
        self._closed = True
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._tree is not None:
            self._tree.close()

    def _open(self) -> None:
        found = bot_cgroup_of(self.pid)
        if found is not None:
            path, version = found
            name = "cpu.stat" if version == 2 else "cpuacct.usage"
            with contextlib.suppress(OSError):
                self._fd = os.open(path / name, os.O_RDONLY)
                self._version = version
        if self._fd is None:
            self._tree = TreeCpu(self.pid)


def _read_counter(fd: int, v2: bool) -> float | None:
    """Seconds from an open ``cpu.stat`` (v2) or ``cpuacct.usage`` (v1) file."""
    try:
        data = os.pread(fd, 4096, 0)
        if not v2:
            return int(data) / 1e9
        for line in data.splitlines():
            if line.startswith(b"usage_usec "):
                return int(line[11:]) / 1e6
    except (OSError, ValueError):
        return None
    return None
