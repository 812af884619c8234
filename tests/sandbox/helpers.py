"""Helpers for the sandbox tests: launching the misbehaving bots in tests/sandbox/bots."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from referee.sandbox import BotProcess, detect_cgroup_parent

BOTS = Path(__file__).parent / "bots"


async def start_bot(script: str, *args: str, **kwargs: Any) -> BotProcess:
    """Launch tests/sandbox/bots/<script> with this interpreter."""
    return await BotProcess.start([sys.executable, str(BOTS / script), *args], **kwargs)


async def wait_for_output(proc: BotProcess, needle: str, timeout_s: float = 10.0) -> str:
    """Wait until ``needle`` appears in the bot's captured output; returns the output."""
    async with asyncio.timeout(timeout_s):
        while needle not in proc.stderr_text():
            if not proc.running and needle not in proc.stderr_text():
                raise AssertionError(f"bot exited before printing {needle!r}: {proc.stderr_text()}")
            await asyncio.sleep(0.01)
    return proc.stderr_text()


def pids_in_output(text: str, label: str) -> list[int]:
    """The pids a bot printed as ``<label> <pid>``."""
    return [int(m) for m in re.findall(rf"^{label} (\d+)$", text, re.MULTILINE)]


def is_gone(pid: int) -> bool:
    """Whether ``pid`` no longer runs (absent, or a zombie nobody has reaped yet)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def wait_gone(pids: list[int], timeout_s: float = 5.0) -> list[int]:
    """Wait for ``pids`` to be gone; returns those still running at the timeout."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        alive = [p for p in pids if not is_gone(p)]
        if not alive or loop.time() > deadline:
            return alive
        await asyncio.sleep(0.02)


needs_cgroup = pytest.mark.skipif(
    detect_cgroup_parent() is None,
    reason="this machine offers no writable memory cgroup (v1 or delegated v2)",
)
