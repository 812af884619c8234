"""Optional memory cgroup per bot (cgroup v2 or v1), detected at run time, never required.

Detection looks at the cgroup the referee itself runs in (``/proc/self/cgroup`` plus
``/proc/self/mountinfo``) and uses it as the parent of one child cgroup per bot when it can:

* v2: the memory controller is enabled for children (``memory`` listed in the parent's
  ``cgroup.subtree_control``, i.e. someone delegated it) and the directory is writable.
  We never enable controllers or move the referee ourselves.
* v1: a hierarchy with the ``memory`` controller is mounted and our directory in it is
  writable.

Otherwise bots run without a cgroup and the RSS poll plus RLIMIT_DATA enforce the limit.

The same goes for the number of processes and threads a bot may have at once (the ``pids``
controller): in the bot's own cgroup on v2 when ``pids`` is delegated too, or in a cgroup of
its own in the v1 ``pids`` hierarchy (:class:`TaskCgroup`). Without one, a fork bomb is
stopped only by the memory limit.

An operator can also turn cgroups off with ``TETROMINO_CGROUP=off`` in the referee's
environment (e.g. on a host whose cgroup tree belongs to a container manager).
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import re
import signal
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

__all__ = [
    "CGROUP_ENV",
    "CGROUP_NAME_PREFIX",
    "CgroupParent",
    "MemoryCgroup",
    "TaskCgroup",
    "candidate_parents",
    "detect_cgroup_parent",
    "detect_pids_parent",
    "parse_mountinfo",
    "parse_proc_cgroup",
    "probe_parent",
    "v1_controller_parent",
]

CGROUP_NAME_PREFIX = "tetromino-bot-"
#: Set to ``off`` to run every bot without a cgroup, whatever the machine offers.
CGROUP_ENV = "TETROMINO_CGROUP"
_counter = itertools.count(1)
#: CPU seconds counted by the bot cgroups this process removed (all its bots' CPU, for a
#: run's closing line): empty when removed, so the count is final.
_removed_cpu_s = 0.0


def removed_cpu_seconds() -> float:
    """CPU seconds used by every bot whose cgroup this process made and removed."""
    return _removed_cpu_s


def _cpu_count(path: Path) -> float:
    """The CPU seconds a bot cgroup counted (``cpu.stat`` on v2, ``cpuacct.usage`` on v1;
    0.0 for one that keeps no count, such as a v1 memory cgroup)."""
    with contextlib.suppress(OSError, ValueError):
        return int((path / "cpuacct.usage").read_bytes()) / 1e9
    with contextlib.suppress(OSError, ValueError):
        for line in (path / "cpu.stat").read_bytes().splitlines():
            if line.startswith(b"usage_usec "):
                return int(line[11:]) / 1e6
    return 0.0


@dataclass(frozen=True, slots=True)
class Mount:
    """One line of /proc/self/mountinfo, the fields we need."""

    root: str
    mount_point: str
    fstype: str
    super_options: frozenset[str]


@dataclass(frozen=True, slots=True)
class CgroupParent:
    """A directory under which per-bot memory cgroups can be made."""

    version: Literal[1, 2]
    path: Path

    @property
    def label(self) -> str:
        """How the measurement names it: ``cgroup_v1`` or ``cgroup_v2``."""
        return f"cgroup_v{self.version}"


def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo(text: str) -> list[Mount]:
    """The cgroup mounts listed in a /proc/<pid>/mountinfo text."""
    mounts: list[Mount] = []
    for line in text.splitlines():
        parts = line.split()
        if "-" not in parts:
            continue
        sep = parts.index("-")
        if len(parts) < sep + 4 or len(parts) < 5:
            continue
        fstype = parts[sep + 1]
        if fstype not in ("cgroup", "cgroup2"):
            continue
        mounts.append(
            Mount(
                root=_unescape(parts[3]),
                mount_point=_unescape(parts[4]),
                fstype=fstype,
                super_options=frozenset(parts[sep + 3].split(",")),
            )
        )
    return mounts


def parse_proc_cgroup(text: str) -> tuple[dict[str, str], str | None]:
    """From a /proc/<pid>/cgroup text: (v1 controller -> path, v2 path or None)."""
    v1: dict[str, str] = {}
    v2: str | None = None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hier_id, controllers, path = parts
        if hier_id == "0" and controllers == "":
            v2 = path
            continue
        for controller in controllers.split(","):
            if controller:
                v1[controller] = path
    return v1, v2


def _join(mount: Mount, path: str) -> Path | None:
    # The path in /proc/self/cgroup is relative to the hierarchy's root; the mount may show only
    # a subtree of it (containers), in which case the path must lie inside that subtree.
    root = mount.root.rstrip("/")
    if root and not (path == root or path.startswith(root + "/")):
        return None
    rel = path[len(root) :].lstrip("/")
    return Path(mount.mount_point) / rel if rel else Path(mount.mount_point)


def candidate_parents(proc_cgroup: str, mountinfo: str) -> list[CgroupParent]:
    """Directories that could hold per-bot memory cgroups, v2 first, before any probing."""
    v1_paths, v2_path = parse_proc_cgroup(proc_cgroup)
    out: list[CgroupParent] = []
    mounts = parse_mountinfo(mountinfo)
    if v2_path is not None:
        for m in mounts:
            if m.fstype == "cgroup2" and (d := _join(m, v2_path)) is not None:
                out.append(CgroupParent(2, d))
    if "memory" in v1_paths:
        for m in mounts:
            if m.fstype == "cgroup" and "memory" in m.super_options:
                d = _join(m, v1_paths["memory"])
                if d is not None:
                    out.append(CgroupParent(1, d))
    return out


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def probe_parent(parent: CgroupParent) -> bool:
    """Whether per-bot memory cgroups can be created under ``parent`` (no side effects)."""
    d = parent.path
    if not d.is_dir() or not os.access(d, os.W_OK | os.X_OK):
        return False
    if parent.version == 2:
        subtree = _read(d / "cgroup.subtree_control")
        return subtree is not None and "memory" in subtree.split()
    return (d / "memory.limit_in_bytes").is_file() and (d / "cgroup.procs").is_file()


def _own_cgroup_texts() -> tuple[str, str] | None:
    """The referee's /proc/self/cgroup and mountinfo, or None when cgroups are turned off or
    cannot be read."""
    if os.environ.get(CGROUP_ENV, "").strip().lower() == "off":
        return None
    proc_cgroup = _read(Path("/proc/self/cgroup"))
    mountinfo = _read(Path("/proc/self/mountinfo"))
    if proc_cgroup is None or mountinfo is None:
        return None
    return proc_cgroup, mountinfo


@cache
def detect_cgroup_parent() -> CgroupParent | None:
    """The first usable parent for the referee's own process, or None (cached)."""
    own = _own_cgroup_texts()
    if own is None:
        return None
    proc_cgroup, mountinfo = own
    for parent in candidate_parents(proc_cgroup, mountinfo):
        if probe_parent(parent):
            return parent
    return None


@cache
def detect_pids_parent() -> CgroupParent | None:
    """Where a v1 ``pids`` cgroup per bot can be made, or None (cached).

    Only v1 needs one: on v2 the task limit goes into the bot's memory cgroup (see
    :meth:`MemoryCgroup.limit_tasks`), since a process belongs to one v2 cgroup only.
    """
    return v1_controller_parent("pids", "cgroup.procs")


def v1_controller_parent(controller: str, control_file: str) -> CgroupParent | None:
    """Where the referee may make v1 ``controller`` cgroups: the controller's mount at the
    referee's own cgroup, a writable folder holding ``control_file``; None elsewhere."""
    own = _own_cgroup_texts()
    if own is None:
        return None
    proc_cgroup, mountinfo = own
    v1_paths, _ = parse_proc_cgroup(proc_cgroup)
    if controller not in v1_paths:
        return None
    for mount in parse_mountinfo(mountinfo):
        if mount.fstype == "cgroup" and controller in mount.super_options:
            d = _join(mount, v1_paths[controller])
            if (
                d is not None
                and d.is_dir()
                and os.access(d, os.W_OK | os.X_OK)
                and (d / control_file).is_file()
            ):
                return CgroupParent(1, d)
    return None


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _new_child(parent: CgroupParent) -> Path:
    """Sweep up stale bot cgroups, then make a fresh, uniquely named one under ``parent``."""
    sweep_stale(parent)
    path = parent.path / f"{CGROUP_NAME_PREFIX}{os.getpid()}-{next(_counter)}"
    path.mkdir()
    return path


class MemoryCgroup:
    """One bot's cgroup: created with a memory cap, removed by ``remove()``."""

    def __init__(self, parent: CgroupParent, path: Path) -> None:
        self.parent = parent
        self.path = path

    @classmethod
    def create(cls, parent: CgroupParent, limit_bytes: int) -> MemoryCgroup:
        """Make a fresh child cgroup capped at ``limit_bytes`` (raises OSError on failure)."""
        cg = cls(parent, _new_child(parent))
        path = cg.path
        try:
            if parent.version == 2:
                _write(path / "memory.max", str(limit_bytes))
                with contextlib.suppress(OSError):
                    _write(path / "memory.swap.max", "0")
                with contextlib.suppress(OSError):
                    # One OOM kill takes the whole bot tree, not just the largest process.
                    _write(path / "memory.oom.group", "1")
            else:
                _write(path / "memory.limit_in_bytes", str(limit_bytes))
                with contextlib.suppress(OSError):
                    _write(path / "memory.memsw.limit_in_bytes", str(limit_bytes))
                with contextlib.suppress(OSError):
                    _write(path / "memory.swappiness", "0")
        except OSError:
            cg.remove()
            raise
        return cg

    def limit_tasks(self, max_tasks: int) -> bool:
        """On v2, also cap the processes and threads in this cgroup (where ``pids`` is
        delegated); returns whether the cap is in place."""
        if self.parent.version != 2:
            return False
        try:
            _write(self.path / "pids.max", str(max_tasks))
        except OSError:
            return False
        return True

    def tasks_refused(self) -> int:
        """How many forks or thread starts the task cap refused (``max`` in pids.events)."""
        text = _read(self.path / "pids.events")
        for line in (text or "").splitlines():
            key, _, value = line.partition(" ")
            if key == "max" and value.strip().isdigit():
                return int(value)
        return 0

    @property
    def procs_file(self) -> Path:
        """The file a process writes its pid into to join."""
        return self.path / "cgroup.procs"

    def pids(self) -> list[int]:
        """Processes in the cgroup now."""
        try:
            fd = os.open(self.procs_file, os.O_RDONLY)
        except OSError:
            return []
        try:
            chunks = []
            while chunk := os.read(fd, 65536):
                chunks.append(chunk)
        except OSError:
            return []
        finally:
            os.close(fd)
        return [int(x) for x in b"".join(chunks).split()]

    def peak_bytes(self) -> int | None:
        """The kernel's peak charge of the cgroup (includes page cache), if it keeps one."""
        name = "memory.peak" if self.parent.version == 2 else "memory.max_usage_in_bytes"
        text = _read(self.path / name)
        return int(text) if text and text.strip().isdigit() else None

    def working_set_bytes(self) -> int | None:
        """What the cgroup holds now, each page counted once however many of its processes
        share it, less the file cache the kernel can drop (usage minus inactive file pages,
        the working set container tools report); ``None`` when unreadable."""
        v2 = self.parent.version == 2
        usage = _read(self.path / ("memory.current" if v2 else "memory.usage_in_bytes"))
        if usage is None or not usage.strip().isdigit():
            return None
        inactive = 0
        wanted = "inactive_file" if v2 else "total_inactive_file"
        for line in (_read(self.path / "memory.stat") or "").splitlines():
            key, _, value = line.partition(" ")
            if key == wanted and value.strip().isdigit():
                inactive = int(value)
        return max(0, int(usage) - inactive)

    def oom_kills(self) -> int | None:
        """How many processes the kernel OOM-killed in this cgroup, if it says."""
        name = "memory.events" if self.parent.version == 2 else "memory.oom_control"
        text = _read(self.path / name)
        if text is None:
            return None
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return None

    def kill_all(self) -> None:
        """SIGKILL every process in the cgroup (cgroup.kill where the kernel has it)."""
        if self.parent.version == 2:
            try:
                _write(self.path / "cgroup.kill", "1")
                return
            except OSError:
                pass
        for pid in self.pids():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def try_remove(self) -> bool:
        """Remove the directory if the cgroup is empty; True once it is gone (its CPU count,
        where it keeps one, then added to :func:`removed_cpu_seconds`)."""
        used = _cpu_count(self.path)
        try:
            self.path.rmdir()
        except FileNotFoundError:
            return True
        except OSError as e:
            if e.errno in (errno.EBUSY, errno.ENOTEMPTY):
                return False
            raise
        global _removed_cpu_s
        _removed_cpu_s += used
        return True

    def remove(self) -> bool:
        """Kill what is left and remove the directory; True once it is gone."""
        if self.try_remove():
            return True
        self.kill_all()
        return self.try_remove()


class TaskCgroup(MemoryCgroup):
    """One bot's cgroup in the v1 ``pids`` hierarchy, capping its processes and threads.

    The directory handling (joining, listing, killing, removal, stale sweeps) is the memory
    cgroup's; only what is written into it differs.
    """

    @classmethod
    def create_tasks(cls, parent: CgroupParent, max_tasks: int) -> TaskCgroup:
        """Make a fresh child of ``parent`` with ``pids.max = max_tasks`` (OSError on failure)."""
        cg = cls(parent, _new_child(parent))
        try:
            _write(cg.path / "pids.max", str(max_tasks))
        except OSError:
            cg.remove()
            raise
        return cg


def sweep_stale(parent: CgroupParent) -> None:
    """Remove bot cgroups left by referees that died (their owner pid is in the name).

    Kills what is still running in them first and waits briefly (at most 0.2 s, only when
    something stale was found) for the kernel to empty them.
    """
    try:
        entries = list(parent.path.iterdir())
    except OSError:
        return
    stale: list[MemoryCgroup] = []
    for entry in entries:
        name = entry.name
        if not name.startswith(CGROUP_NAME_PREFIX) or not entry.is_dir():
            continue
        owner = name[len(CGROUP_NAME_PREFIX) :].split("-", 1)[0]
        if not owner.isdigit() or int(owner) == os.getpid() or _pid_alive(int(owner)):
            continue
        cg = MemoryCgroup(parent, entry)
        with contextlib.suppress(OSError):
            cg.kill_all()
        stale.append(cg)
    for _ in range(20):
        stale = [cg for cg in stale if not _try_remove_quietly(cg)]
        if not stale:
            return
        time.sleep(0.01)


def _try_remove_quietly(cg: MemoryCgroup) -> bool:
    try:
        return cg.try_remove()
    except OSError:
        return True  # not ours to fight over
