"""Cleanup guarantees: SupervisorGroup, cancelled stops, and a referee that exits or dies."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from referee.sandbox import SupervisorGroup, live_count

from .helpers import BOTS, pids_in_output, start_bot, wait_for_output, wait_gone

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]


async def test_group_stops_every_bot_even_when_the_body_fails() -> None:
    """Leaving a SupervisorGroup because of an exception still stops all its bots (including
    one that ignores SIGTERM and one's forked child) and releases them."""
    before = live_count()
    pids: list[int] = []
    with pytest.raises(RuntimeError, match="referee bug"):
        async with SupervisorGroup(grace_s=0.2, cgroup="off") as group:
            a = await group.start([sys.executable, str(BOTS / "sleeps_forever.py")])
            b = await group.start([sys.executable, str(BOTS / "ignores_sigterm.py")])
            c = await group.start(
                [sys.executable, str(BOTS / "forks_child.py"), "new-group", "sleep"]
            )
            for proc in (a, b, c):
                await wait_for_output(proc, "ready")
            pids = [a.pid, b.pid, c.pid, *pids_in_output(c.stderr_text(), "child")]
            raise RuntimeError("referee bug")
    assert len(pids) == 4
    assert await wait_gone(pids) == []
    assert group.processes == ()
    assert live_count() == before
    with pytest.raises(RuntimeError, match="closed"):
        await group.start([sys.executable, "-c", "pass"])


async def test_cancelled_stop_still_kills() -> None:
    """If the task running stop() is cancelled during the grace period, the bot is killed."""
    proc = await start_bot("ignores_sigterm.py", cgroup="off")
    await wait_for_output(proc, "ready")
    task = asyncio.get_running_loop().create_task(proc.stop(grace_s=30))
    await asyncio.sleep(0.1)  # not a wait: cancelled wherever stop is, the bot must die
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone([proc.pid]) == []
    await proc.stop()  # releases what the cancelled stop could not


REFEREE = textwrap.dedent(
    """
    import asyncio, os, sys
    from referee.sandbox import BotProcess

    async def main():
        proc = await BotProcess.start(
            [sys.executable, {bot!r}, "same-group", "sleep"], cgroup={cgroup!r}
        )
        while "ready" not in proc.stderr_text():
            await asyncio.sleep(0.01)
        print(proc.pid, proc.stderr_text().split()[1], flush=True)
        {ending}

    asyncio.run(main())
    """
)


def _run_referee(ending: str, cgroup: str) -> subprocess.Popen[str]:
    code = REFEREE.format(bot=str(BOTS / "forks_child.py"), cgroup=cgroup, ending=ending)
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.getcwd(),
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )


async def test_referee_exiting_without_stop_kills_its_bots() -> None:
    """A referee that returns without stopping its bot kills it and its child at exit."""
    ref = _run_referee("return", cgroup="off")
    out, _ = ref.communicate(timeout=30)
    pids = [int(x) for x in out.split()]
    assert len(pids) == 2
    assert await wait_gone(pids) == []


async def test_referee_killed_by_sigkill_takes_its_bot_along() -> None:
    """When the referee dies by SIGKILL (no cleanup code runs), the kernel kills the bot
    (parent-death signal); a leftover bot child is the gap docs/limits.md names."""
    ref = _run_referee("await asyncio.sleep(3600)", cgroup="off")
    assert ref.stdout is not None
    line = await asyncio.get_running_loop().run_in_executor(None, ref.stdout.readline)
    bot, child = (int(x) for x in line.split())
    ref.send_signal(signal.SIGKILL)
    ref.wait()
    assert await wait_gone([bot]) == []
    os.kill(child, signal.SIGKILL)  # the named gap: clean it up ourselves
