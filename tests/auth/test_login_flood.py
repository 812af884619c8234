"""A flood of wrong tokens is throttled per address and never delays a valid login; a bot
refused for a throttled address or a duplicate session says why (real server, real streams,
real SDK bot processes). Bounded: 600 Hellos, loopback only, every wait under a timeout."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from authserver import hello, login, running_site

from client_sdk.proto import referee_pb2 as pb
from referee.server.throttle import PER_ADDRESS

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
FLOOD = 600
CLIENTS = 20


async def _bad_hello(channel: grpc.aio.Channel, i: int) -> pb.Error:
    call: Any = channel.stream_stream(
        "/tetromino.referee.v1.Referee/Play",
        request_serializer=lambda m: m.SerializeToString(),
        response_deserializer=pb.RefereeMessage.FromString,
    )()
    try:
        await call.write(hello(f"arena_{i:016x}_" + "x" * 43, bot=f"flood{i}"))
        async with asyncio.timeout(60):
            reply = await call.read()
        assert isinstance(reply, pb.RefereeMessage)
        return reply.error
    finally:
        call.cancel()


async def test_valid_logins_get_in_during_a_flood_of_wrong_tokens(tmp_path: Path) -> None:
    """600 Hellos with wrong tokens from 20 concurrent clients at 127.0.0.1 are each answered
    (UNAUTHENTICATED until the address's bucket is full, then RESOURCE_EXHAUSTED with a retry
    time, unexamined); meanwhile a valid login from ::1 and a token verified earlier from
    127.0.0.1 get in, while a new token from the throttled address is told to wait."""
    async with running_site(tmp_path) as site:
        flooded = f"127.0.0.1:{site.port}"
        known = site.tokens["student2"]
        assert (await login(flooded, known)).WhichOneof("kind") == "welcome"
        channels = [grpc.aio.insecure_channel(flooded) for _ in range(CLIENTS)]
        started = time.monotonic()
        try:
            flood = asyncio.gather(*(_bad_hello(channels[i % CLIENTS], i) for i in range(FLOOD)))
            async with asyncio.timeout(60):
                while site.gate.rejected == 0:  # the flood is in flight: wrong tokens turned away
                    await asyncio.sleep(0.01)
                valid = await login(f"[::1]:{site.port}", site.tokens["student"])
                again = await login(flooded, known, bot="second")
            errors = await flood
            elapsed = time.monotonic() - started
        finally:
            for channel in channels:
                await channel.close()
        assert valid.WhichOneof("kind") == "welcome"
        assert again.WhichOneof("kind") == "welcome"
        codes = {e.code for e in errors}
        assert codes <= {pb.ERROR_CODE_UNAUTHENTICATED, pb.ERROR_CODE_RESOURCE_EXHAUSTED}
        throttled = [e for e in errors if e.code == pb.ERROR_CODE_RESOURCE_EXHAUSTED]
        assert len(throttled) > FLOOD // 2
        assert all(e.retry_after_s >= 1 and "retry after" in e.message for e in throttled)
        assert any("too many failed logins from 127.0.0.1" in e.message for e in throttled)
        # Only what the address's bucket holds (plus what leaked meanwhile) was looked up.
        assert site.gate.rejected <= PER_ADDRESS.capacity + PER_ADDRESS.leak_per_s * elapsed + 1
        fresh = await login(flooded, site.tokens["instructor"])
        assert fresh.error.code == pb.ERROR_CODE_RESOURCE_EXHAUSTED
        assert fresh.error.retry_after_s >= 1


def _bot(port: int, token: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "client_sdk",
            "--server",
            f"127.0.0.1:{port}",
            "--token",
            token,
            "--name",
            "greedy",
            "client_sdk.examples.greedy_bot",
            *extra,
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


async def _line_with(proc: subprocess.Popen[str], words: str, timeout: float = 60) -> str:
    """The first line of the bot's output holding ``words`` (read in a thread, bounded)."""
    assert proc.stdout is not None
    seen: list[str] = []
    async with asyncio.timeout(timeout):
        while True:
            line = await asyncio.to_thread(proc.stdout.readline)
            assert line, f"the bot ended without saying {words!r}: {seen}"
            seen.append(line)
            if words in line:
                return line


async def _keep_failing(target: str) -> None:
    """A failed login from this address every 0.2 s, until cancelled."""
    for i in range(100, 10_000):
        await login(target, f"arena_{i:016x}_" + "y" * 43)
        await asyncio.sleep(0.2)


async def test_sdk_backs_off_when_throttled_and_names_a_duplicate(tmp_path: Path) -> None:
    """An SDK bot from a throttled address says why and waits the time the referee asked,
    then gets in; a second copy with the same token and name exits at once with the
    referee's reason."""
    async with running_site(tmp_path) as site:
        target = f"127.0.0.1:{site.port}"
        for i in range(31):  # fill the address's bucket
            await login(target, f"arena_{i:016x}_" + "y" * 43)
        # Keep it full until the bot has been refused: on a busy machine its start-up can take
        # longer than the bucket takes to drain.
        keep = asyncio.create_task(_keep_failing(target))
        first = _bot(site.port, site.tokens["student"])
        try:
            line = await _line_with(first, "too many failed logins from 127.0.0.1")
            keep.cancel()
            assert "retrying in" in line
            await _line_with(first, "connected to")
            second = _bot(site.port, site.tokens["student"])
            try:
                out, _ = await asyncio.to_thread(second.communicate, timeout=60)
            finally:
                second.kill()
            assert second.returncode == 1
            assert "DUPLICATE_SESSION" in out and "already connected with this token" in out
        finally:
            keep.cancel()
            first.kill()
            first.wait(timeout=30)
