"""How much CPU time a launched bot has used: from its own cgroup where it has one, else from
its process tree.

A CPU clock (docs/limits.md) charges a bot the CPU its processes used, so the figure must be
cumulative, monotonic and cheap to read once per move:

* **cgroup**: the kernel's own count for every task that ever ran in the bot's cgroup, exited
  ones included, in nanoseconds: ``cpu.stat`` ``usage_usec`` on cgroup v2 (the bot's memory
  cgroup; the file exists whether or not the ``cpu`` controller is enabled) or
  ``cpuacct.usage`` of a ``cpuacct`` cgroup of its own on v1 (:class:`CpuCgroup`).
* **process tree** (no usable cgroup): user plus system time of the bot's processes and of the
  children they reaped, read through psutil at clock-tick resolution (10 ms). A process that
  died unreaped keeps its last reading, so the total never goes down.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cache

import psutil

from referee.sandbox.cgroups import (
    CgroupParent,
    MemoryCgroup,
    _join,
    _new_child,
    _own_cgroup_texts,
    parse_mountinfo,
    parse_proc_cgroup,
)
from referee.sandbox.memory import list_children

__all__ = ["CpuCgroup", "TreeCpu", "detect_cpuacct_parent", "read_cgroup_cpu"]


def read_cgroup_cpu(cgroup: MemoryCgroup) -> float | None:
    """CPU seconds used by every task that ran in ``cgroup`` (``None``: the kernel keeps no
    such count there, or the cgroup is gone)."""
    try:
        if cgroup.parent.version == 2:
            fd = os.open(cgroup.path / "cpu.stat", os.O_RDONLY)
            try:
                data = os.read(fd, 4096)
            finally:
                os.close(fd)
            for line in data.splitlines():
                if line.startswith(b"usage_usec "):
                    return int(line[11:]) / 1e6
            return None
        fd = os.open(cgroup.path / "cpuacct.usage", os.O_RDONLY)
        try:
            return int(os.read(fd, 64)) / 1e9
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return None


@cache
def detect_cpuacct_parent() -> CgroupParent | None:
    """Where a v1 ``cpuacct`` cgroup per bot can be made, or None (cached).

    Only v1 needs one: on v2 every cgroup counts its CPU time, the bot's memory cgroup too.
    """
    own = _own_cgroup_texts()
    if own is None:
        return None
    proc_cgroup, mountinfo = own
    v1_paths, _ = parse_proc_cgroup(proc_cgroup)
    if "cpuacct" not in v1_paths:
        return None
    for mount in parse_mountinfo(mountinfo):
        if mount.fstype == "cgroup" and "cpuacct" in mount.super_options:
            d = _join(mount, v1_paths["cpuacct"])
            if (
                d is not None
                and d.is_dir()
                and os.access(d, os.W_OK | os.X_OK)
                and (d / "cpuacct.usage").is_file()
            ):
                return CgroupParent(1, d)
    return None


class CpuCgroup(MemoryCgroup):
    """One bot's cgroup in the v1 ``cpuacct`` hierarchy, counting its CPU time.

    The directory handling (joining, listing, killing, removal, stale sweeps) is the memory
    cgroup's; nothing is written into it, it only counts.
    """

    @classmethod
    def create_cpu(cls, parent: CgroupParent) -> CpuCgroup:
        """Make a fresh child of ``parent`` (OSError on failure)."""
        return cls(parent, _new_child(parent))


class TreeCpu:
    """CPU seconds of a process tree rooted at ``root_pid``, for bots without a cgroup.

    Each reading walks the tree from its root (plus ``extra`` pids known to belong to the bot,
    e.g. re-parented ones) and adds every process's own and reaped children's times. A process
    gone since the last reading keeps its last figure unless its parent is still in the tree
    (the parent's children times hold it now, exactly), so nothing is counted twice or lost
    to a reap.
    """

    def __init__(self, root_pid: int) -> None:
        self.root_pid = root_pid
        self._procs: dict[int, psutil.Process] = {}
        #: pid -> (parent pid, last total of its own and its reaped children's times)
        self._last: dict[int, tuple[int, float]] = {}
        self._gone = 0.0
        self._total = 0.0

    def seconds(self, extra: Iterable[int] = ()) -> float:
        """The tree's CPU seconds so far (never less than at the previous reading)."""
        pids = self._walk(extra)
        seen: dict[int, tuple[int, float]] = {}
        for pid in pids:
            reading = self._read(pid)
            if reading is not None:
                seen[pid] = reading
        for pid, (parent, last) in self._last.items():
            if pid not in seen and parent not in seen:
                self._gone += last
            if pid not in seen:
                self._procs.pop(pid, None)
        self._last = seen
        total = self._gone + sum(value for _, value in seen.values())
        self._total = max(self._total, total)
        return self._total

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

    def _read(self, pid: int) -> tuple[int, float] | None:
        proc = self._procs.get(pid)
        try:
            if proc is None:
                proc = self._procs[pid] = psutil.Process(pid)
            with proc.oneshot():
                times = proc.cpu_times()
                parent = proc.ppid()
        except psutil.Error:
            self._procs.pop(pid, None)
            return None
        used = times.user + times.system + times.children_user + times.children_system
        return parent, used
