"""Memory of a process tree with pages shared copy-on-write: counted once, not per process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from referee.sandbox.memory import MB, judged_resident, sample_tree

#: Touches 60 MB, forks 6 copies that only wait, then says so and waits.
FORKER = """
import os, signal, sys
block = bytearray(60 * 1024 * 1024)
for i in range(0, len(block), 4096):
    block[i] = 1
for _ in range(6):
    if os.fork() == 0:
        while True:
            signal.pause()
print("forked", flush=True)
signal.pause()
"""


@pytest.mark.slow
def test_copy_on_write_pages_are_counted_once() -> None:
    """Seven processes sharing 60 MB sum to over 400 MB of RSS; over a 200 MB limit the
    verdict's figure (PSS here, no cgroup given) counts the shared pages once."""
    proc = subprocess.Popen(
        [sys.executable, "-c", FORKER], stdout=subprocess.PIPE, start_new_session=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"forked"
        sample = sample_tree(proc.pid)
        deadline = time.monotonic() + 30
        while len(sample.pids) < 7:  # the last child is past fork and seen in the tree
            assert time.monotonic() < deadline, sample
            time.sleep(0.01)
            sample = sample_tree(proc.pid)
        assert len(sample.pids) == 7 and sample.rss_bytes > 400 * MB, sample
        judged = judged_resident(sample, 200 * MB, None)
        assert 60 * MB < judged < 150 * MB, judged / MB
        # Under the limit, or for one process, the RSS sum is the figure.
        assert judged_resident(sample, 1000 * MB, None) == sample.rss_bytes
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the forker and its copies: its own group
        proc.wait()
