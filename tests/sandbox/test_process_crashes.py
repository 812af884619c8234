"""Crashing, hanging and forking bots: the verdict facts, and that nothing is left running."""

from __future__ import annotations

import asyncio
import signal
import sys

import pytest

from referee.sandbox import BotProcess

from .helpers import needs_cgroup, pids_in_output, start_bot, wait_for_output, wait_gone

pytestmark = pytest.mark.asyncio


@pytest.mark.slow
async def test_os_exit_code_is_reported() -> None:
    """A bot calling os._exit(3) is described as exiting with code 3, not as a memory fault."""
    async with await start_bot("exit_code.py") as proc:
        assert await proc.wait() == 3
    assert proc.exit_description() == "exited with code 3"
    assert not proc.memory_exceeded
    assert await wait_gone([proc.pid]) == []


@pytest.mark.slow
async def test_uncaught_exception_keeps_traceback() -> None:
    """An uncaught exception gives exit code 1 and its traceback in the captured stderr."""
    async with await start_bot("raises.py") as proc:
        await proc.wait()
    assert proc.exit_description() == "exited with code 1"
    text = proc.stderr_text()
    assert "about to fail" in text  # stdout is captured too, in order
    assert "RuntimeError: bot bug" in text
    assert not proc.memory_exceeded


@pytest.mark.slow
async def test_segfault_is_named() -> None:
    """A segfaulting bot is described by its signal, and leaves no core file behind."""
    async with await start_bot("segfault.py") as proc:
        await proc.wait()
    assert proc.returncode == -signal.SIGSEGV
    assert proc.exit_description() == "killed by signal SIGSEGV (segmentation fault)"
    assert not proc.memory_exceeded


@pytest.mark.slow
async def test_sleeping_bot_is_stopped_by_sigterm() -> None:
    """stop() ends a bot that sleeps forever with SIGTERM, and says the referee stopped it."""
    proc = await start_bot("sleeps_forever.py")
    await wait_for_output(proc, "ready")
    assert proc.running
    await proc.stop(grace_s=5.0)
    assert proc.returncode == -signal.SIGTERM
    assert proc.exit_description() == "stopped by the referee (SIGTERM)"
    assert await wait_gone([proc.pid]) == []


@pytest.mark.slow
async def test_bot_ignoring_sigterm_gets_sigkill_after_grace() -> None:
    """A bot that ignores SIGTERM is killed with SIGKILL once the grace period is over."""
    proc = await start_bot("ignores_sigterm.py")
    await wait_for_output(proc, "ready")
    await proc.stop(grace_s=0.2)
    assert proc.returncode == -signal.SIGKILL
    assert proc.exit_description() == "stopped by the referee (SIGKILL after grace)"
    assert await wait_gone([proc.pid]) == []


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["same-group", "new-group", "new-session"])
@pytest.mark.parametrize("then", ["exit", "sleep"])
async def test_forked_child_is_cleaned_up(mode: str, then: str) -> None:
    """A child that keeps running (and ignores SIGTERM, and may leave the bot's process group
    or session) is killed with the bot, whether the bot exits first or is stopped."""
    # No cgroup, and no polls after the first, so only the group/session/tag sweep can find it.
    proc = await start_bot("forks_child.py", mode, then, cgroup="off", poll_interval_s=60)
    text = await wait_for_output(proc, "ready")
    (child,) = pids_in_output(text, "child")
    if then == "exit":
        await proc.wait()
        assert proc.exit_description() == "exited with code 0"
    await proc.stop(grace_s=0.2)
    assert await wait_gone([proc.pid, child]) == []


@pytest.mark.slow
async def test_daemonised_grandchild_is_cleaned_up_without_cgroup() -> None:
    """A grandchild that double-forks out of the bot's tree and session before any poll saw it
    is still found (by the environment tag) and killed."""
    proc = await start_bot("double_fork.py", cgroup="off", poll_interval_s=60)
    text = await wait_for_output(proc, "ready")
    (grandchild,) = pids_in_output(text, "grandchild")
    await proc.wait()
    await proc.stop(grace_s=0.2)
    assert await wait_gone([proc.pid, grandchild]) == []


@pytest.mark.slow
@needs_cgroup
async def test_daemonised_grandchild_stays_in_the_cgroup() -> None:
    """A double-forked grandchild stays a member of the bot's memory cgroup (so it is charged
    and killed with the bot), and the cgroup is removed by stop()."""
    proc = await start_bot("double_fork.py", cgroup="auto", poll_interval_s=60)
    text = await wait_for_output(proc, "ready")
    (grandchild,) = pids_in_output(text, "grandchild")
    await proc.wait()
    cgroup = proc.cgroup
    assert cgroup is not None
    assert grandchild in cgroup.pids() or await wait_gone([grandchild], 0) == []
    await proc.stop(grace_s=0.2)
    assert await wait_gone([proc.pid, grandchild]) == []
    assert not cgroup.path.exists()


@pytest.mark.slow
async def test_stderr_flood_is_bounded_and_never_blocks() -> None:
    """A bot writing 64 MB to stderr runs to completion (the pipe is always drained) and only
    the head and tail, with a marker, are kept."""
    limit = 16 * 1024
    async with await start_bot("floods_stderr.py", "64", stderr_limit_bytes=limit) as proc:
        assert await proc.wait() == 0
    text = proc.stderr_text()
    assert text.startswith("FIRST LINE\n")
    assert text.endswith("LAST LINE\n")
    assert "bytes of output dropped" in text
    assert len(proc.stderr_bytes()) < limit + 100
    assert proc.stderr_dropped_bytes > 60 * 1024 * 1024


async def test_missing_program_fails_at_start() -> None:
    """A program that does not exist raises FileNotFoundError from start(), leaving nothing."""
    with pytest.raises(FileNotFoundError):
        await BotProcess.start(["/nonexistent/bot-binary"])
    with pytest.raises(FileNotFoundError):
        await BotProcess.start(["no-such-program-on-path-xyz"])


@pytest.mark.slow
async def test_env_and_cwd_reach_the_bot(tmp_path: object) -> None:
    """The bot runs in the given directory with the given environment (plus the sandbox tag)."""
    code = (
        "import os; print(os.getcwd()); e = os.environ;"
        "print(e.get('BOT_SECRET'), 'PATH' in e, 'TETROMINO_SANDBOX_TAG' in e)"
    )
    async with await BotProcess.start(
        [sys.executable, "-c", code], env={"BOT_SECRET": "s3"}, cwd=str(tmp_path)
    ) as proc:
        assert await proc.wait() == 0
    assert proc.stderr_text().split("\n")[:2] == [str(tmp_path), "s3 False True"]


@pytest.mark.slow
async def test_thread_bomb_reaches_its_task_limit_and_says_so() -> None:
    """A bot starting threads without end is refused at its task limit (where a pids cgroup
    enforces one); it dies of the refusal and its exit sentence names the limit."""
    proc = await start_bot("spawns.py", "threads", max_tasks=24)
    async with proc:
        if proc.max_tasks is None:
            pytest.skip("this machine offers no pids cgroup")
        await asyncio.wait_for(proc.wait(), 30)
    assert proc.returncode == 1
    assert "refused after" in proc.stderr_text()
    assert proc.tasks_refused >= 1
    assert proc.exit_description() == (
        f"exited with code 1 after reaching its limit of 24 processes and threads "
        f"({proc.tasks_refused} refused)"
    )


@pytest.mark.slow
async def test_fork_bomb_is_held_at_its_task_limit_and_cleaned_up() -> None:
    """A fork bomb never holds more than its task limit of processes, and stopping the bot
    leaves none of them behind."""
    proc = await start_bot("spawns.py", "forks", max_tasks=16, memory_limit_mb=None)
    async with proc:
        if proc.max_tasks is None:
            pytest.skip("this machine offers no pids cgroup")
        await wait_for_output(proc, "bombing")
        async with asyncio.timeout(20):
            while proc.tasks_refused < 50:
                await asyncio.sleep(0.01)
        members = proc._groups.pids()
        assert 1 < len(members) <= 16
    assert await wait_gone(members) == []
