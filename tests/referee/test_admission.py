"""Admission under a burst: every bot of a class connecting at once is admitted or told why.

Real server on 127.0.0.1 port 0, real client processes (raw protocol, no retries, so a lost
stream shows as a lost stream), bounded: at most 1,500 sessions over 4 processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from referee.server.admission import Doorway, Refusal
from referee.server.app import RefereeServer

BURST = Path(__file__).parent / "bots" / "burstclient.py"
REPO = Path(__file__).resolve().parents[2]
PROCESSES = 4


async def _burst(server: RefereeServer, sessions: int) -> Counter[str]:
    """Starts the burst against ``server``; returns every session's first answer, counted."""
    address = await server.start("127.0.0.1:0")
    per = sessions // PROCESSES
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(BURST),
            address,
            str(i * per),
            str(per),
            "50",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        for i in range(PROCESSES)
    ]
    answers: Counter[str] = Counter()
    try:
        async with asyncio.timeout(180):
            for proc in procs:
                assert proc.stdout is not None
                answers.update(json.loads(await proc.stdout.readline()))
    finally:
        for proc in procs:
            if proc.stdin is not None:
                proc.stdin.close()
        for proc in procs:
            try:
                async with asyncio.timeout(20):
                    await proc.wait()
            except TimeoutError:
                proc.kill()
        await server.stop(0)
    return answers


#: Room for the whole burst's handshakes at once: these tests are about sessions held and gRPC
#: core's queue, and all their clients share one address, whose logins in progress the default
#: doorway caps at 100 (a loaded machine had more than that under way and refused two).
WIDE = 2000


@pytest.mark.slow
def test_a_burst_of_1500_sessions_is_admitted() -> None:
    """1,500 sessions opened at once all get a Welcome, and the server counts them admitted
    (past 1,000 calls waiting, gRPC core's default refuses a random share, unseen by the
    server: 148 of 2,000 sessions were lost so)."""
    server = RefereeServer(games=["tetress"], doorway=Doorway(WIDE, WIDE))
    answers = asyncio.run(_burst(server, 1500))
    assert answers == Counter({"welcome": 1500})
    assert server.handshakes.admitted == 1500
    assert sum(server.handshakes.refused.values()) == 0


@pytest.mark.slow
def test_a_burst_beyond_capacity_is_told_why() -> None:
    """With room for 600, a burst of 1,000 gets 600 Welcomes and 400 'server is full'
    refusals that say so; the server counts each refusal by its reason."""
    server = RefereeServer(games=["tetress"], max_sessions=600, doorway=Doorway(WIDE, WIDE))
    answers = asyncio.run(_burst(server, 1000))
    full = "error:ERROR_CODE_RESOURCE_EXHAUSTED:the server is full (600 sessions); try again later"
    assert answers == Counter({"welcome": 600, full: 400})
    assert server.handshakes.admitted == 600
    assert server.handshakes.refused == Counter({Refusal.FULL: 400})
    assert server.handshakes.snapshot()["refused"]["full"] == 400
