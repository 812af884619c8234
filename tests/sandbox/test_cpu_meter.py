"""A launched bot's CPU time, read from its own cgroup where it has one, else from its process
tree: what its processes used, a reaped child's included, counted once."""

from __future__ import annotations

import asyncio
import re
import sys
import time

import pytest

from referee.sandbox import BotProcess
from referee.sandbox.cpu import BotCpu

# Every test here starts processes.
pytestmark = pytest.mark.slow

_TOTAL = re.compile(r"TOTAL (\S+)\n")

# Burns 0.3 s of CPU, then has a child burn 0.3 s and reaps it, then prints what the kernel
# says it and its reaped children used, and sleeps.
_BOT = """
import os, subprocess, sys, time
burn = "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.3: pass"
exec(burn)
subprocess.run([sys.executable, "-c", burn], check=True)
t = os.times()
print("TOTAL", t.user + t.system + t.children_user + t.children_system, flush=True)
time.sleep(120)
"""


@pytest.mark.parametrize("cgroup", ["auto", "off"])
def test_cpu_meter_counts_the_tree_once(cgroup: str) -> None:
    """The meter reads what the bot and its reaped child used (no more: the child is counted
    once), from the cgroup where there is one, else from the process tree."""

    async def main() -> tuple[float, float, str]:
        proc = await BotProcess.start(
            [sys.executable, "-c", _BOT], cgroup=cgroup, memory_limit_mb=None
        )
        meter = BotCpu(proc.pid)
        try:
            first = meter.seconds()
            deadline = time.monotonic() + 120
            # The whole line: an unbuffered print may reach the pipe a word at a time.
            while not (line := _TOTAL.search(proc.stderr_text())):
                assert time.monotonic() < deadline, proc.stderr_text()
                await asyncio.sleep(0.05)
            total = float(line.group(1))
            reading = meter.seconds()
            assert reading >= first
            return total, reading, meter.method
        finally:
            meter.close()
            await proc.stop(0.5)

    total, reading, method = asyncio.run(main())
    assert total >= 0.6
    assert abs(reading - total) < 0.05, (reading, total, method)
    if cgroup == "off":
        assert method == "process_tree"
