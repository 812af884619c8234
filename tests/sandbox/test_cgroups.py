"""Memory cgroup detection (pure parsing and probing) and, where offered, real cgroups."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from referee.sandbox import MB, CgroupParent, MemoryCgroup, detect_cgroup_parent
from referee.sandbox.cgroups import (
    CGROUP_NAME_PREFIX,
    candidate_parents,
    parse_proc_cgroup,
    probe_parent,
    sweep_stale,
)

from .helpers import needs_cgroup, wait_gone

HYBRID_CGROUP = """\
9:name=systemd:/
4:memory:/process_api/5f22
1:cpu:/
0::/
"""
HYBRID_MOUNTINFO = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
PURE_V2_CGROUP = "0::/user.slice/user-1000.slice/referee.service\n"
PURE_V2_MOUNTINFO = (
    "25 1 0:22 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
)


def test_hybrid_host_offers_v2_then_v1_memory_directory() -> None:
    """On a hybrid host both hierarchies are candidates, the v1 one is the memory mount plus
    our own cgroup path; the cpu-only v1 mount is not."""
    assert candidate_parents(HYBRID_CGROUP, HYBRID_MOUNTINFO) == [
        CgroupParent(2, Path("/sys/fs/cgroup/unified")),
        CgroupParent(1, Path("/sys/fs/cgroup/memory/process_api/5f22")),
    ]


def test_pure_v2_host_offers_our_own_cgroup() -> None:
    """On a cgroup2-only host the candidate is our cgroup under the unified mount."""
    assert candidate_parents(PURE_V2_CGROUP, PURE_V2_MOUNTINFO) == [
        CgroupParent(2, Path("/sys/fs/cgroup/user.slice/user-1000.slice/referee.service"))
    ]


def test_container_mount_root_is_stripped() -> None:
    """When the mount shows only a subtree (a container), paths are taken relative to it, and
    a path outside the subtree gives no candidate."""
    mountinfo = "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    inside = "4:memory:/docker/abc/bots\n"
    outside = "4:memory:/elsewhere\n"
    assert candidate_parents(inside, mountinfo) == [
        CgroupParent(1, Path("/sys/fs/cgroup/memory/bots"))
    ]
    assert candidate_parents(outside, mountinfo) == []


def test_parse_proc_cgroup_splits_v1_controllers() -> None:
    """Comma-joined v1 controllers each map to the path; the 0:: line is the v2 path."""
    v1, v2 = parse_proc_cgroup("3:cpu,cpuacct:/a\n4:memory:/b\n0::/c\n")
    assert v1 == {"cpu": "/a", "cpuacct": "/a", "memory": "/b"}
    assert v2 == "/c"
    assert parse_proc_cgroup("2:cpu:/x\n") == ({"cpu": "/x"}, None)


def test_probe_v2_requires_delegated_memory_controller(tmp_path: Path) -> None:
    """A v2 parent is usable only if memory is enabled for its children."""
    (tmp_path / "cgroup.subtree_control").write_text("cpu io\n")
    assert not probe_parent(CgroupParent(2, tmp_path))
    (tmp_path / "cgroup.subtree_control").write_text("cpu io memory\n")
    assert probe_parent(CgroupParent(2, tmp_path))
    assert not probe_parent(CgroupParent(2, tmp_path / "missing"))


def test_probe_v1_requires_memory_files(tmp_path: Path) -> None:
    """A v1 parent is usable only if it is a memory cgroup directory."""
    assert not probe_parent(CgroupParent(1, tmp_path))
    (tmp_path / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    (tmp_path / "cgroup.procs").write_text("")
    assert probe_parent(CgroupParent(1, tmp_path))


@pytest.mark.slow
def test_sweep_removes_only_dead_owners_directories(tmp_path: Path) -> None:
    """Stale bot cgroups of a referee that is gone are removed; ours, a live owner's and
    foreign directories stay."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    names = [
        f"{CGROUP_NAME_PREFIX}{dead.pid}-1",
        f"{CGROUP_NAME_PREFIX}{os.getpid()}-1",
        f"{CGROUP_NAME_PREFIX}1-1",
        "someone-else",
    ]
    for name in names:
        (tmp_path / name).mkdir()
    sweep_stale(CgroupParent(1, tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names[1:])


def test_detection_on_this_machine_is_consistent() -> None:
    """Whatever detect_cgroup_parent() finds is one of the candidates and passes the probe."""
    parent = detect_cgroup_parent()
    if parent is None:
        return
    text = Path("/proc/self/cgroup").read_text()
    assert parent in candidate_parents(text, Path("/proc/self/mountinfo").read_text())
    assert probe_parent(parent)


@needs_cgroup
def test_real_cgroup_is_created_capped_and_removed() -> None:
    """A real bot cgroup carries the cap, starts empty and is removed without trace."""
    parent = detect_cgroup_parent()
    assert parent is not None
    cg = MemoryCgroup.create(parent, 300 * MB)
    try:
        limit_file = "memory.max" if parent.version == 2 else "memory.limit_in_bytes"
        assert int((cg.path / limit_file).read_text()) == 300 * MB
        assert cg.pids() == []
        assert cg.oom_kills() == 0
    finally:
        assert cg.remove()
    assert not cg.path.exists()


@pytest.mark.slow
@needs_cgroup
@pytest.mark.asyncio
async def test_next_referee_sweeps_a_killed_referees_cgroup() -> None:
    """After a referee dies by SIGKILL, the next cgroup creation kills what is left in the
    dead referee's bot cgroup (a child the parent-death signal does not reach) and removes it."""
    parent = detect_cgroup_parent()
    assert parent is not None
    bot_script = str(Path(__file__).parent / "bots" / "forks_child.py")
    code = (
        "import asyncio, sys\n"
        "from referee.sandbox import BotProcess\n"
        "async def main():\n"
        f"    argv = [sys.executable, {bot_script!r}, 'new-session', 'sleep']\n"
        "    p = await BotProcess.start(argv)\n"
        "    while 'ready' not in p.stderr_text(): await asyncio.sleep(0.01)\n"
        "    print(p.pid, p.stderr_text().split()[1], p.cgroup.path, flush=True)\n"
        "    await asyncio.sleep(3600)\n"
        "asyncio.run(main())\n"
    )
    ref = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert ref.stdout is not None
    bot, child, path = ref.stdout.readline().split()
    ref.send_signal(signal.SIGKILL)
    ref.wait()
    assert Path(path).exists()
    cg = MemoryCgroup.create(parent, 100 * MB)  # sweeps stale ones first
    cg.remove()
    assert await wait_gone([int(bot), int(child)]) == []
    assert not Path(path).exists()
