"""One-game tokens: each opens exactly one session (a resume of it aside), on a real server."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from client_sdk.proto import referee_pb2 as pb
from referee.server.app import RefereeServer
from referee.server.auth import TokenTable

METHOD = "/tetromino.referee.v1.Referee/Play"


async def _open(address: str, token: str) -> tuple[Any, Any, pb.RefereeMessage]:
    """Open a Play stream with a Hello; the channel, the call and the first reply."""
    channel = grpc.aio.insecure_channel(address)
    call = channel.stream_stream(
        METHOD,
        request_serializer=lambda m: m.SerializeToString(),
        response_deserializer=pb.RefereeMessage.FromString,
    )()
    hello = pb.Hello(bot_name="probe", token=token, protocol_version=pb.PROTOCOL_VERSION_CURRENT)
    await call.write(pb.BotMessage(hello=hello))
    async with asyncio.timeout(10):
        reply = await call.read()
    return channel, call, reply


def _outcomes(one_session: bool) -> list[str]:
    """Three sessions with one token: while the first is open, and after it closed."""

    async def main() -> list[str]:
        table = TokenTable({"t0": "seat0", "t1": "seat1"}, one_session=one_session)
        server = RefereeServer(auth=table, games=["tetress"])
        address = await server.start("127.0.0.1:0")
        out: list[str] = []
        try:
            first = await _open(address, "t0")
            second = await _open(address, "t0")
            other = await _open(address, "t1")
            open_before = len(list(server.lobby.sessions()))
            first[1].cancel()
            await first[0].close()
            async with asyncio.timeout(30):  # the server has seen the first session end
                while len(list(server.lobby.sessions())) == open_before:
                    await asyncio.sleep(0.01)
            third = await _open(address, "t0")
            for channel, _, reply in (first, second, other, third):
                kind = reply.WhichOneof("kind")
                out.append(kind if kind == "welcome" else f"error {reply.error.code}")
                await channel.close()
        finally:
            await server.stop(0)
        return out

    return asyncio.run(main())


def test_a_one_game_token_opens_exactly_one_session() -> None:
    """A second session with a one-game token is refused (UNAUTHENTICATED), while the first is
    open and after it closed; the other seat's token is unaffected."""
    refused = f"error {pb.ERROR_CODE_UNAUTHENTICATED}"
    assert _outcomes(one_session=True) == ["welcome", refused, "welcome", refused]


def test_ordinary_tokens_still_open_many_sessions() -> None:
    """A player's ordinary token (not one-game) may open several sessions."""
    assert _outcomes(one_session=False) == ["welcome"] * 4
