"""The exec shim loads the C library before it joins the bot's cgroups: what the bot is charged
(CPU, memory) counts from the join, and loading ctypes is the sandbox's own start-up."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from referee.sandbox.identity import HostIdentity
from referee.sandbox.spawn import shim_argv

pytestmark = pytest.mark.slow


def test_ctypes_is_loaded_when_the_shim_joins_the_cgroups(tmp_path: Path) -> None:
    """Two FIFOs stand for two ``cgroup.procs`` files: once the shim has written its pid into
    the first, it waits to open the second, and its memory map already holds ctypes'
    extension; released, it execs its program as usual."""
    first, second = tmp_path / "memory.procs", tmp_path / "pids.procs"
    os.mkfifo(first)
    os.mkfifo(second)
    argv = shim_argv("/bin/true", ["true"], 0, [str(first), str(second)], None)
    shim = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        with open(first) as fifo:  # returns once the shim opens it to join
            pid = fifo.read().strip()
        # The shim now waits in its open() of the second file, until a reader comes.
        maps = Path(f"/proc/{pid}/maps").read_text()
        with open(second) as fifo:
            assert fifo.read().strip() == pid
    finally:
        _, err = shim.communicate(timeout=60)
    assert pid == str(shim.pid) and shim.returncode == 0, err
    assert "_ctypes" in maps, "ctypes was loaded after the shim joined the cgroups"


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root referee stages paths")
def test_the_stage_is_mounted_before_the_shim_joins_the_cgroups(tmp_path: Path) -> None:
    """With a path to stage, the shim is already in a mount namespace of its own, the path bound
    on its stage point, when it joins the cgroups (held between two FIFOs as above)."""
    source, point = tmp_path / "source", tmp_path / "point"
    source.mkdir()
    point.mkdir()
    (source / "marker").write_text("staged")
    first, second = tmp_path / "memory.procs", tmp_path / "pids.procs"
    os.mkfifo(first)
    os.mkfifo(second)
    identity = HostIdentity(os.getuid(), [(str(source), str(point))])
    argv = shim_argv("/bin/true", ["true"], 0, [str(first), str(second)], identity)
    shim = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        with open(first) as fifo:
            pid = fifo.read().strip()
        namespace = os.readlink(f"/proc/{pid}/ns/mnt")
        mounts = Path(f"/proc/{pid}/mountinfo").read_text()
        with open(second) as fifo:
            fifo.read()
    finally:
        _, err = shim.communicate(timeout=60)
    assert shim.returncode == 0, err
    assert namespace != os.readlink("/proc/self/ns/mnt")
    assert f" {point} " in mounts, mounts[-500:]
