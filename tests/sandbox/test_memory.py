"""Memory limits on real bot processes: MLE verdicts, peaks, and the limits the bot runs under."""

from __future__ import annotations

import asyncio
import resource
import sys
import time

import pytest

from referee.sandbox import MB, BotProcess, MemoryPolicy

from .helpers import needs_cgroup, pids_in_output, start_bot, wait_for_output, wait_gone

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]

LIMIT_MB = 250
#: Documented bound (docs/limits.md) on how far the RSS poll alone lets the peak go above the
#: limit for an allocator taking 50 MB per 10 ms, at the default 20 ms poll interval.
POLL_OVERSHOOT_BOUND_MB = 100


async def test_fast_allocator_is_killed_near_the_limit_by_the_poll() -> None:
    """A bot allocating 50 MB per 10 ms, with no cgroup, is killed by the RSS poll as an MLE
    with its peak in the record, at most the documented bound above the limit."""
    proc = await start_bot("allocates.py", "50", "0.01", memory_limit_mb=LIMIT_MB, cgroup="off")
    async with proc:
        await asyncio.wait_for(proc.wait_memory_exceeded(), 30)
        await proc.wait()
    assert proc.memory_exceeded
    assert proc.memory_verdict == "rss"
    peak_mb = proc.peak_rss_bytes / MB
    assert LIMIT_MB < peak_mb <= LIMIT_MB + POLL_OVERSHOOT_BOUND_MB
    assert proc.exit_description() == (
        f"killed: memory limit 250 MB exceeded (peak {peak_mb:.1f} MB)"
    )
    assert proc.measurement == "rlimit_data+rss_poll"


async def test_poll_keeps_sampling_while_the_event_loop_is_blocked() -> None:
    """The memory poll does not wait for the event loop: an allocator that passes the limit
    while the loop is blocked for 1 s is still killed by the poll near the limit (not left
    to die of a MemoryError at RLIMIT_DATA with a stale, far-too-low peak)."""
    proc = await start_bot("allocates.py", "20", "0.01", memory_limit_mb=200, cgroup="off")
    async with proc:
        await asyncio.sleep(0.1)  # not a wait: the interpreter is starting
        time.sleep(1.0)  # not a wait: the referee's loop is busy elsewhere; RLIMIT_DATA is 456 MB
        await proc.wait()
    assert proc.memory_verdict == "rss"
    assert 200 < proc.peak_rss_bytes / MB <= 200 + POLL_OVERSHOOT_BOUND_MB
    assert "MemoryError" not in proc.stderr_text()


@needs_cgroup
async def test_cgroup_caps_an_allocator_the_poll_never_sees() -> None:
    """With polling effectively off, the kernel's cgroup limit stops the allocator at
    limit + cgroup headroom; the verdict is still MLE, with the peak and the cgroup named."""
    policy = MemoryPolicy(LIMIT_MB)
    proc = await start_bot(
        "allocates.py", "50", "0.01", memory_limit_mb=LIMIT_MB, cgroup="auto", poll_interval_s=60
    )
    async with proc:
        await proc.wait()
    assert proc.memory_verdict == "cgroup_oom"
    assert proc.measurement.endswith("+cgroup_v1") or proc.measurement.endswith("+cgroup_v2")
    assert proc.cgroup_peak_bytes is not None
    assert proc.cgroup_peak_bytes <= policy.cgroup_limit_bytes
    # No poll ran, so the cgroup's own peak charge is the evidence of the overshoot.
    assert LIMIT_MB < proc.peak_bytes / MB <= LIMIT_MB + policy.cgroup_headroom_mb + 16
    assert "killed by the kernel" in proc.exit_description()


async def test_memory_error_under_rlimit_data_is_an_mle() -> None:
    """A single allocation beyond RLIMIT_DATA raises MemoryError in the bot, which dies of it:
    that is judged an MLE even though its resident peak stayed low."""
    proc = await start_bot("memory_error.py", "1000", memory_limit_mb=100, cgroup="off")
    async with proc:
        assert await proc.wait() == 1
    assert "MemoryError" in proc.stderr_text()
    assert proc.memory_exceeded
    assert proc.memory_verdict == "memory_error"
    assert proc.peak_rss_bytes < 100 * MB
    assert proc.exit_description().startswith(
        "memory limit 100 MB exceeded: an allocation was refused (MemoryError, peak "
    )


async def test_caught_memory_error_then_other_crash_is_not_an_mle() -> None:
    """A bot that survives a MemoryError and later crashes for another reason is a crash."""
    proc = await start_bot("catches_memory_error.py", "1000", memory_limit_mb=100, cgroup="off")
    async with proc:
        await proc.wait()
    assert "MemoryError caught" in proc.stderr_text()
    assert not proc.memory_exceeded
    assert proc.exit_description() == "exited with code 1"


async def test_bot_under_the_limit_is_measured_not_judged() -> None:
    """A bot holding 60 MB is not over 250 MB; its peak is at least what it holds."""
    proc = await start_bot("allocates.py", "20", "0", "60", memory_limit_mb=LIMIT_MB)
    async with proc:
        await wait_for_output(proc, "ready")
        seen = proc.samples
        while proc.samples < seen + 2:  # let the poll see the final size
            await asyncio.sleep(0.01)
        assert 60 * MB <= proc.peak_rss_bytes < LIMIT_MB * MB
    assert not proc.memory_exceeded
    assert proc.exit_description() == "stopped by the referee (SIGTERM)"


async def test_process_tree_is_summed() -> None:
    """Parent and child holding 150 MB each are over a 250 MB limit together, though neither
    is alone; both are killed."""
    proc = await start_bot("tree_alloc.py", "150", memory_limit_mb=LIMIT_MB, cgroup="off")
    async with proc:
        await wait_for_output(proc, "child")
        await asyncio.wait_for(proc.wait_memory_exceeded(), 30)
        await proc.wait()
    children = pids_in_output(proc.stderr_text(), "child")
    assert len(children) == 1
    assert proc.memory_verdict == "rss"
    assert proc.peak_rss_bytes > LIMIT_MB * MB
    assert await wait_gone([proc.pid, *children]) == []


async def test_bot_runs_with_rlimit_data_and_no_core_files() -> None:
    """Inside the bot RLIMIT_DATA is limit + headroom (soft and hard) and RLIMIT_CORE is 0."""
    code = (
        "import resource as r;"
        "print(r.getrlimit(r.RLIMIT_DATA), r.getrlimit(r.RLIMIT_CORE), r.getrlimit(r.RLIMIT_AS))"
    )
    async with await BotProcess.start(
        [sys.executable, "-c", code], memory_limit_mb=100, rlimit_data_headroom_mb=50
    ) as proc:
        assert await proc.wait() == 0
    data = 150 * MB
    unlimited = resource.RLIM_INFINITY
    assert proc.stderr_text().strip() == f"({data}, {data}) (0, 0) ({unlimited}, {unlimited})"


async def test_no_limit_only_measures() -> None:
    """memory_limit_mb=None sets no RLIMIT_DATA and no cgroup, but still measures the peak."""
    code = (
        "import resource as r, time; x = bytearray(30 * 2**20); x[::4096] = b'x' * len(x[::4096]);"
        " print(r.getrlimit(r.RLIMIT_DATA)); time.sleep(0.3)"
    )
    async with await BotProcess.start([sys.executable, "-c", code], memory_limit_mb=None) as proc:
        assert await proc.wait() == 0
    unlimited = resource.RLIM_INFINITY
    assert proc.stderr_text().strip() == f"({unlimited}, {unlimited})"
    assert proc.measurement == "rss_poll"
    assert proc.cgroup is None
    assert proc.peak_rss_bytes >= 30 * MB  # seen by the polls while the bot held it
    assert not proc.memory_exceeded


async def test_a_large_referee_does_not_make_a_small_bot_an_mle() -> None:
    """A referee whose own RSS is above a bot's limit does not leak into the bot's peak
    (vfork + exec folds the parent's high-water mark into the child's ru_maxrss)."""
    ballast = bytearray(160 * MB)
    ballast[::4096] = b"x" * len(ballast[::4096])  # touch every page so it is resident
    proc = await start_bot("memory_error.py", "1", memory_limit_mb=100, cgroup="off")
    async with proc:
        assert await proc.wait() == 0
    assert not proc.memory_exceeded
    assert proc.peak_bytes < 100 * MB
    del ballast
