"""Stopping a sandboxed bot finds its processes through its cgroup, not a scan of the machine,
and still leaves none behind; an unsandboxed bot is still found by the scan."""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

import psutil
import pytest

from referee.sandbox import tree
from referee.sandbox.isolation import Isolation
from referee.sandbox.launch import BotSpec, launch

from .helpers import BOTS, needs_cgroup, wait_for_output, wait_gone
from .sandbox_required import require_sandbox

pytestmark = [pytest.mark.slow, needs_cgroup]


async def _confined(proc: object, timeout_s: float = 30.0) -> bool:
    tracker = proc._tracker  # type: ignore[attr-defined]
    async with asyncio.timeout(timeout_s):
        while not tracker.confined:
            await asyncio.sleep(0.02)
    return True


async def _stop_hiding_child(
    tmp_path: Path, isolation: Isolation, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[int], int, bool]:
    """Launch a bot whose child leaves its session and ignores SIGTERM; stop it. The bot's
    host pids seen before the stop, the scans of /proc made while stopping, and whether the
    bot was known to be confined to its cgroup."""
    bot = tmp_path / "hides.py"
    bot.write_text((BOTS / "forks_child.py").read_text())
    python = "python" if isolation is Isolation.BWRAP else sys.executable
    spec = BotSpec("command", f"{python} {shlex.quote(str(bot))} new-session sleep")
    launched = await launch(spec, "", "", isolation=isolation, poll_interval=0.02)
    await wait_for_output(launched.proc, "child", 30)
    confined = False
    if isolation is Isolation.BWRAP:
        confined = await _confined(launched.proc)
    pids = [launched.pid, *launched.proc._groups.pids()]  # type: ignore[attr-defined]
    pids += [p.pid for p in psutil.Process(launched.pid).children(recursive=True)]
    scans = []
    real = tree.find_members
    monkeypatch.setattr(tree, "find_members", lambda *a: scans.append(a) or real(*a))
    await launched.stop(0.3)
    return sorted(set(pids)), len(scans), confined


def test_a_sandboxed_bot_is_stopped_through_its_cgroup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its child in a session of its own, deaf to SIGTERM, is gone after the stop, which
    read the cgroup's members and scanned no process of the machine."""
    require_sandbox()
    pids, scans, confined = asyncio.run(_stop_hiding_child(tmp_path, Isolation.BWRAP, monkeypatch))
    assert confined
    assert len(pids) >= 3  # the wrapper, the bot, its hiding child (at least)
    assert scans == 0
    assert asyncio.run(wait_gone(pids)) == []


def test_an_unsandboxed_bot_is_still_found_by_the_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside the sandbox a bot could move itself out of its cgroup: the stop scans."""
    pids, scans, confined = asyncio.run(_stop_hiding_child(tmp_path, Isolation.NONE, monkeypatch))
    assert not confined and scans >= 1
    assert asyncio.run(wait_gone(pids)) == []
