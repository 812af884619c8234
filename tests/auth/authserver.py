"""A real referee server on loopback port 0 over a real SQLite file with stored tokens of every
role, and raw Play streams to poke its handshake with."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import grpc

from client_sdk.proto import referee_pb2 as pb
from referee.rpc.arena import ArenaService
from referee.server.access import Gate
from referee.server.app import RefereeServer
from referee.server.storedauth import StoredTokenAuth
from referee.storage import Repository
from referee.storage.enums import Role
from referee.storage.models import utcnow
from referee.storage.tokens import split_token

PLAY = "/tetromino.referee.v1.Referee/Play"


@dataclass
class Site:
    """The server, its repository and gate, and one token per kind of caller."""

    server: RefereeServer
    repo: Repository
    gate: Gate
    address: str
    port: int
    tokens: dict[str, str] = field(default_factory=dict)


def issue_tokens(repo: Repository) -> dict[str, str]:
    """Tokens named by who holds them: each role, plus an expired and a revoked one."""
    for name in ("ann", "ben", "prof", "root"):
        repo.create_player(name)
    tokens = {
        "student": repo.issue_token("ann"),
        "student2": repo.issue_token("ben"),
        "instructor": repo.issue_token("prof", role=Role.INSTRUCTOR),
        "admin": repo.issue_token("root", role=Role.ADMIN),
        "expired": repo.issue_token("ann", expires_at=utcnow() - timedelta(minutes=1)),
        "revoked": repo.issue_token("ann", label="old"),
    }
    repo.revoke_token(split_token(tokens["revoked"])[0])
    return tokens


@asynccontextmanager
async def running_site(tmp: Path, **server_options: Any) -> AsyncIterator[Site]:
    """A server listening on every loopback address (``[::]``), so that a test can come from
    127.0.0.1 and from ::1: two client addresses on one machine."""
    repo = Repository.open(str(tmp / "arena.db"))
    tokens = issue_tokens(repo)
    gate = Gate(repo)
    server = RefereeServer(
        auth=StoredTokenAuth(repo, gate),
        games=["tetress"],
        services=[ArenaService(repo, gate=gate)],
        **server_options,
    )
    address = await server.start("[::]:0")
    port = int(address.rsplit(":", 1)[1])
    try:
        yield Site(server, repo, gate, address, port, tokens)
    finally:
        await server.stop(0)
        gate.close()
        repo.close()


def hello(token: str, bot: str = "probe", resume: str = "") -> pb.BotMessage:
    return pb.BotMessage(
        hello=pb.Hello(
            bot_name=bot,
            token=token,
            protocol_version=pb.PROTOCOL_VERSION_CURRENT,
            resume_session_id=resume,
        )
    )


class PlayStream:
    """One raw Play stream on its own channel: send a Hello, read the answers."""

    def __init__(self, target: str) -> None:
        self.channel = grpc.aio.insecure_channel(target)
        self.call: Any = self.channel.stream_stream(
            PLAY,
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=pb.RefereeMessage.FromString,
        )()

    async def first(self, message: pb.BotMessage, timeout: float = 30) -> pb.RefereeMessage:
        await self.call.write(message)
        return await self.read(timeout)

    async def read(self, timeout: float = 30) -> pb.RefereeMessage:
        async with asyncio.timeout(timeout):
            reply = await self.call.read()
        assert reply is not grpc.aio.EOF, "the stream ended without an answer"
        return reply  # type: ignore[no-any-return]

    async def close(self) -> None:
        self.call.cancel()
        await self.channel.close()


async def login(target: str, token: str, bot: str = "probe") -> pb.RefereeMessage:
    """One Hello on a fresh stream: the referee's first answer (the stream is then closed)."""
    stream = PlayStream(target)
    try:
        return await stream.first(hello(token, bot))
    finally:
        await stream.close()
