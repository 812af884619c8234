"""A bot turned away by a full referee is told why, backs off, and gets in once there is room.

Real server on 127.0.0.1 port 0 with room for one session, a raw session holding that room,
and a real SDK bot process (``python -m client_sdk``).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import grpc
import pytest

from client_sdk.proto import referee_pb2 as pb
from referee.server.admission import Refusal
from referee.server.app import RefereeServer

REPO = Path(__file__).resolve().parents[2]
METHOD = "/tetromino.referee.v1.Referee/Play"


async def _occupy(address: str) -> tuple[grpc.aio.Channel, object]:
    """A raw session that takes the server's only room; returns its channel and call."""
    channel = grpc.aio.insecure_channel(address)
    call = channel.stream_stream(
        METHOD,
        request_serializer=pb.BotMessage.SerializeToString,
        response_deserializer=pb.RefereeMessage.FromString,
    )()
    version = getattr(pb, "PROTOCOL_VERSION_CURRENT", 1)
    await call.write(pb.BotMessage(hello=pb.Hello(bot_name="occupier", protocol_version=version)))
    first = await call.read()
    assert first.WhichOneof("kind") == "welcome"
    return channel, call


async def _admission(server: RefereeServer) -> list[str]:
    address = await server.start("127.0.0.1:0")
    channel, call = await _occupy(address)
    bot = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client_sdk",
        "--server",
        address,
        "client_sdk.examples.random_bot",
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert bot.stderr is not None
    lines: list[str] = []
    try:
        async with asyncio.timeout(60):
            while "not admitted" not in (lines[-1] if lines else ""):
                lines.append((await bot.stderr.readline()).decode())
            call.cancel()  # type: ignore[attr-defined]
            await channel.close()
            await server.lobby.wait_for(lambda s: s.name.endswith("random_bot"))
    finally:
        bot.kill()
        await bot.wait()
        await server.stop(0)
    return lines


@pytest.mark.slow
def test_a_full_server_tells_the_bot_which_retries_and_gets_in() -> None:
    """The SDK bot logs the referee's reason (the server is full) with its retry delay, and
    is admitted once the only session leaves; the server counted the refusal as 'full'."""
    server = RefereeServer(games=["tetress"], max_sessions=1)
    lines = asyncio.run(_admission(server))
    assert "the server is full (1 sessions)" in lines[-1]
    assert "RESOURCE_EXHAUSTED" in lines[-1] and "retrying in" in lines[-1]
    assert server.handshakes.refused[Refusal.FULL] >= 1
    assert server.handshakes.admitted >= 2
