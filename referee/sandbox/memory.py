"""Memory limit policy and measurement of a bot's process tree.

Resident set size (RSS) of the bot's whole process tree, sampled from ``/proc``, is the figure
the verdict uses. ``RLIMIT_DATA`` (set in the child before it runs bot code) and, where the
machine offers one, a memory cgroup are hard caps above that limit that stop a runaway
allocator between samples. See docs/limits.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import psutil

if TYPE_CHECKING:
    from referee.sandbox.cgroups import MemoryCgroup

__all__ = [
    "MB",
    "MemoryPolicy",
    "TreeSample",
    "format_mb",
    "judged_resident",
    "list_children",
    "looks_like_memory_error",
    "read_pss",
    "read_rss_hwm",
    "sample_tree",
]

#: One "MB" in limits and messages: 2**20 bytes.
MB = 1024 * 1024

#: Default extra address space allowed by RLIMIT_DATA above the verdict limit. The gap between a
#: Python bot's data segment (VmData) and its resident memory is the interpreter's and the
#: libraries' reservations: measured on the dev machine (2 cores) as 78 MB for NumPy, 80 MB for a
#: gRPC client and 106 MB for NumPy plus a gRPC server; thread stacks (8 MB each) and OpenBLAS
#: buffers grow with cores, hence the margin.
DEFAULT_RLIMIT_DATA_HEADROOM_MB = 256

#: Default slack of the cgroup cap above the verdict limit, so that the RSS poll (which gives a
#: precise figure) normally fires first and the kernel's OOM killer only catches allocators too
#: fast for the poll.
DEFAULT_CGROUP_HEADROOM_MB = 32


def format_mb(n_bytes: int) -> str:
    """``n_bytes`` as megabytes with one decimal, e.g. ``263.1 MB``."""
    return f"{n_bytes / MB:.1f} MB"


@dataclass(frozen=True, slots=True)
class MemoryPolicy:
    """The limits applied to one bot, all derived from ``limit_mb``."""

    limit_mb: float
    rlimit_data_headroom_mb: float = DEFAULT_RLIMIT_DATA_HEADROOM_MB
    cgroup_headroom_mb: float = DEFAULT_CGROUP_HEADROOM_MB

    def __post_init__(self) -> None:
        if self.limit_mb <= 0:
            raise ValueError("limit_mb must be positive")
        if self.rlimit_data_headroom_mb < 0 or self.cgroup_headroom_mb < 0:
            raise ValueError("headrooms must not be negative")

    @property
    def limit_bytes(self) -> int:
        """The verdict limit on the tree's resident memory."""
        return int(self.limit_mb * MB)

    @property
    def rlimit_data_bytes(self) -> int:
        """The RLIMIT_DATA value set in the bot process (soft and hard)."""
        return int((self.limit_mb + self.rlimit_data_headroom_mb) * MB)

    @property
    def cgroup_limit_bytes(self) -> int:
        """The cgroup memory cap, when a cgroup is used."""
        return int((self.limit_mb + self.cgroup_headroom_mb) * MB)

    def label(self) -> str:
        """The limit as people write it, e.g. ``250 MB``."""
        return f"{self.limit_mb:g} MB"


# A MemoryError (or NumPy's _ArrayMemoryError, or C++'s bad_alloc) as the last thing a dead bot
# printed means an allocation was refused: by RLIMIT_DATA, by the cgroup, or by the kernel's
# overcommit check. Any of those is the bot asking for more than its limit.
_MEMORY_ERROR_LINE = re.compile(
    rb"^(?:[\w.]*MemoryError\b|.*std::bad_alloc|.*Cannot allocate memory|"
    rb"Fatal Python error: .*[Mm]emory)",
    re.MULTILINE,
)


def looks_like_memory_error(output_tail: bytes) -> bool:
    """Whether the last lines a bot printed before dying report a refused allocation.

    Only the final traceback counts: the last line that is not indented and not blank must
    name the error (so a bot that printed "MemoryError" earlier and crashed later for another
    reason is not matched).
    """
    lines = [ln for ln in output_tail.splitlines() if ln.strip()]
    for line in reversed(lines[-40:]):
        if line[:1] in (b" ", b"\t"):
            continue
        return _MEMORY_ERROR_LINE.match(line) is not None
    return False


@dataclass(frozen=True, slots=True)
class TreeSample:
    """One reading of a process tree's memory."""

    pids: tuple[int, ...]
    rss_bytes: int  # sum of VmRSS over the tree
    max_hwm_bytes: int  # largest VmHWM (per-process peak RSS) in the tree


# In /proc/<pid>/status VmHWM comes right before VmRSS.
_HWM_RSS = re.compile(rb"VmHWM:\s+(\d+) kB\nVmRSS:\s+(\d+) kB")


def read_rss_hwm(pid: int) -> tuple[int, int] | None:
    """(VmRSS, VmHWM) of ``pid`` in bytes, or None if it is gone or a zombie."""
    try:
        fd = os.open(f"/proc/{pid}/status", os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 8192)
    except OSError:
        return None
    finally:
        os.close(fd)
    m = _HWM_RSS.search(data)
    if m is None:
        return None  # zombie or kernel thread: no memory of its own any more
    hwm, rss = int(m.group(1)) * 1024, int(m.group(2)) * 1024
    return rss, max(hwm, rss)


_PSS = re.compile(rb"^Pss:\s+(\d+) kB", re.MULTILINE)


def read_pss(pid: int) -> int | None:
    """The proportional set size of ``pid`` in bytes (each shared page divided among the
    processes sharing it), or None if it is gone. Slower to read than VmRSS: it walks the
    process's page tables."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    m = _PSS.search(data)
    return None if m is None else int(m.group(1)) * 1024


def judged_resident(sample: TreeSample, limit: int | None, cgroup: MemoryCgroup | None) -> int:
    """The tree's resident memory as the verdict counts it: the RSS sum, unless that is over
    the limit with several processes. Then pages they share are counted once (a fork bomb's
    copy-on-write pages are not multiplied by its processes): the cgroup's working set where
    the bot has a cgroup, else the sum of the processes' PSS; never more than the RSS sum."""
    rss = sample.rss_bytes
    if limit is None or rss <= limit or len(sample.pids) < 2:
        return rss
    working = cgroup.working_set_bytes() if cgroup is not None else None
    if working is not None:
        return min(rss, working)
    pss = sum(p for pid in sample.pids if (p := read_pss(pid)) is not None)
    return min(rss, pss) if pss else rss


_HAVE_CHILDREN_FILE = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def list_children(pid: int) -> list[int]:
    """Direct children of ``pid``.

    Reads ``/proc/<pid>/task/<tid>/children`` (cost proportional to the bot's threads) rather
    than scanning every process on the machine, which is what psutil's ``children()`` does.
    """
    if not _HAVE_CHILDREN_FILE:
        try:
            return [c.pid for c in psutil.Process(pid).children()]
        except psutil.Error:
            return []
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            fd = os.open(f"/proc/{pid}/task/{tid}/children", os.O_RDONLY)
        except OSError:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        finally:
            os.close(fd)
        out.extend(int(x) for x in data.split())
    return out


def sample_tree(root_pid: int, extra_pids: Iterable[int] = ()) -> TreeSample:
    """Sum the resident memory of ``root_pid``, its descendants and ``extra_pids``.

    ``extra_pids`` are processes known to belong to the bot that may have left the tree
    (re-parented after their parent died), e.g. the members of the bot's cgroup.
    """
    seen: set[int] = set()
    stack = [root_pid, *extra_pids]
    rss_total = 0
    max_hwm = 0
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        reading = read_rss_hwm(pid)
        if reading is not None:
            rss, hwm = reading
            rss_total += rss
            max_hwm = max(max_hwm, hwm)
        stack.extend(list_children(pid))
    return TreeSample(tuple(sorted(seen)), rss_total, max_hwm)
