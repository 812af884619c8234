"""Measures the sandbox's figures quoted in docs/limits.md (not a test).

    python -m tests.sandbox.measure [runs]

Prints, as JSON: the overshoot of the peak above the limit for fast allocators caught by the
RSS poll alone (no cgroup) and by the cgroup where available, the cost of one poll, and the
launch overhead of the exec shim.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from referee.sandbox import MB, BotProcess, detect_cgroup_parent
from referee.sandbox.memory import sample_tree

ALLOC = str(Path(__file__).parent / "bots" / "allocates.py")
LIMIT_MB = 250


async def overshoot(step_mb: int, pause_s: float, runs: int, **kw: Any) -> dict[str, Any]:
    over: list[float] = []
    verdicts: set[str] = set()
    for _ in range(runs):
        argv = [sys.executable, ALLOC, str(step_mb), str(pause_s)]
        async with await BotProcess.start(argv, memory_limit_mb=LIMIT_MB, **kw) as proc:
            await proc.wait()
        assert proc.memory_exceeded, proc.exit_description()
        verdicts.add(str(proc.memory_verdict))
        over.append(proc.peak_rss_bytes / MB - LIMIT_MB)
    return {
        "allocator": f"{step_mb} MB every {pause_s * 1000:g} ms",
        "overshoot_mb_median": round(statistics.median(over), 1),
        "overshoot_mb_max": round(max(over), 1),
        "verdicts": sorted(verdicts),
    }


async def poll_cost(n: int = 5000) -> float:
    argv = [sys.executable, "-c", "import time; time.sleep(30)"]
    async with await BotProcess.start(argv, cgroup="off", poll_interval_s=60) as proc:
        await asyncio.sleep(0.3)  # not a wait: the bot settles before the count
        t0 = time.perf_counter()
        for _ in range(n):
            sample_tree(proc.pid)
        return (time.perf_counter() - t0) / n * 1e6


async def referee_cpu_per_bot(n_bots: int = 50, window_s: float = 2.0) -> float:
    """CPU the referee spends supervising one idle bot (polling at 20 ms), in % of one core."""
    from referee.sandbox import SupervisorGroup

    argv = [sys.executable, "-c", "import time; time.sleep(60)"]
    async with SupervisorGroup(cgroup="off") as group:
        for _ in range(n_bots):
            await group.start(argv)
        await asyncio.sleep(0.5)  # not a wait: the bots settle before the count
        c0, t0 = time.process_time(), time.perf_counter()
        await asyncio.sleep(window_s)  # not a wait: the measured window
        c1, t1 = time.process_time(), time.perf_counter()
    return (c1 - c0) / (t1 - t0) / n_bots * 100


async def launch_cost(n: int = 20) -> dict[str, float]:
    def direct() -> float:
        import subprocess

        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        return time.perf_counter() - t0

    async def sandboxed() -> float:
        t0 = time.perf_counter()
        async with await BotProcess.start([sys.executable, "-c", "pass"], cgroup="off") as p:
            await p.wait()
        return time.perf_counter() - t0

    d = statistics.median(direct() for _ in range(n))
    s = statistics.median([await sandboxed() for _ in range(n)])
    return {"python_c_pass_ms": round(d * 1000, 1), "sandboxed_ms": round(s * 1000, 1)}


async def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    out: dict[str, Any] = {"limit_mb": LIMIT_MB, "poll_interval_ms": 20}
    out["rss_poll_only"] = [
        await overshoot(50, 0.01, runs, cgroup="off"),
        await overshoot(10, 0.001, runs, cgroup="off"),
        await overshoot(200, 0.0, runs, cgroup="off"),
    ]
    if detect_cgroup_parent() is not None:
        out["cgroup_only"] = [await overshoot(50, 0.01, runs, cgroup="auto", poll_interval_s=60)]
        out["poll_and_cgroup"] = [await overshoot(50, 0.01, runs, cgroup="auto")]
    out["poll_cost_us"] = round(await poll_cost(), 1)
    out["referee_cpu_percent_per_idle_bot"] = round(await referee_cpu_per_bot(), 2)
    out["launch"] = await launch_cost()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
