"""Stopping a server ends its Play handlers before it returns, so none finishes (and logs) later."""

from __future__ import annotations

import asyncio

import grpc

from client_sdk.proto import referee_pb2 as pb
from referee.server.app import RefereeServer
from referee.server.auth import TokenTable
from referee.server.lobby import Lobby
from referee.server.session import BotSession

METHOD = "/tetromino.referee.v1.Referee/Play"


class SlowToForget(Lobby):
    """A lobby whose removal takes a while, as a busy server's does (well inside the time
    ``stop`` gives its handlers)."""

    def __init__(self) -> None:
        super().__init__()
        self.removed: list[str] = []

    async def remove(self, session: BotSession) -> None:
        await asyncio.sleep(0.5)  # not a wait: a slow clean-up, the case under test
        await super().remove(session)
        self.removed.append(session.name)


def test_stop_returns_only_after_every_session_handler_has_cleaned_up() -> None:
    """A bot still connected when the server stops: its handler's clean-up (leaving the lobby)
    is finished when ``stop`` returns, not left to run after the caller's loop is gone."""

    async def main() -> tuple[list[str], list[str]]:
        lobby = SlowToForget()
        server = RefereeServer(auth=TokenTable({"good": "p1"}), games=["tetress"], lobby=lobby)
        address = await server.start("127.0.0.1:0")
        channel = grpc.aio.insecure_channel(address)
        call = channel.stream_stream(
            METHOD,
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )()
        hello = pb.Hello(
            bot_name="stayer", token="good", protocol_version=pb.PROTOCOL_VERSION_CURRENT
        )
        await call.write(pb.BotMessage(hello=hello))
        async with asyncio.timeout(10):
            welcome = await call.read()
        assert isinstance(welcome, pb.RefereeMessage)
        assert welcome.WhichOneof("kind") == "welcome", welcome
        try:
            await server.stop(grace=0)
            removed_at_stop = list(lobby.removed)
        finally:
            call.cancel()
            await channel.close()
        return removed_at_stop, [session.name for session in lobby.sessions()]

    removed, still_open = asyncio.run(main())
    assert removed == ["stayer"]
    assert still_open == []
