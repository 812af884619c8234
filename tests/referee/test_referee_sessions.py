"""Session handshakes and bad input on a real server: clear errors, never a crashed server."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import grpc
import pytest

from client_sdk.proto import referee_pb2 as pb
from referee.server.app import RefereeServer, TlsFiles
from referee.server.auth import TokenTable

METHOD = "/tetromino.referee.v1.Referee/Play"


async def _exchange(
    address: str, messages: list[Any], replies: int, credentials: Any = None
) -> list[pb.RefereeMessage]:
    """Send ``messages`` on one Play stream and collect up to ``replies`` answers."""
    if credentials is None:
        channel = grpc.aio.insecure_channel(address)
    else:
        channel = grpc.aio.secure_channel(
            address, credentials, options=[("grpc.ssl_target_name_override", "localhost")]
        )
    async with channel:
        call = channel.stream_stream(
            METHOD,
            request_serializer=lambda m: m if isinstance(m, bytes) else m.SerializeToString(),
            response_deserializer=pb.RefereeMessage.FromString,
        )()
        for message in messages:
            await call.write(message)
        out: list[pb.RefereeMessage] = []
        async with asyncio.timeout(10):
            while len(out) < replies:
                reply = await call.read()
                if reply is grpc.aio.EOF:
                    break
                out.append(reply)
        call.cancel()
        return out


def _hello(**fields: Any) -> pb.BotMessage:
    fields.setdefault("bot_name", "probe")
    fields.setdefault("token", "good")
    fields.setdefault("protocol_version", pb.PROTOCOL_VERSION_CURRENT)
    return pb.BotMessage(hello=pb.Hello(**fields))


def test_handshake_errors_are_clear_and_the_server_survives() -> None:
    """Wrong token, no Hello, an unknown protocol version and no common game each get a fatal
    Error with the right code; an unknown game id is a non-fatal error; the server then still
    welcomes a good bot."""

    async def main() -> dict[str, list[pb.RefereeMessage]]:
        server = RefereeServer(auth=TokenTable({"good": "p1"}), games=["tetress"])
        address = await server.start("127.0.0.1:0")
        try:
            cases: dict[str, list[Any]] = {
                "token": [_hello(token="bad")],
                "no_hello": [pb.BotMessage(move=pb.Move(game_id="g", action="x"))],
                "garbage": [b"\xff\xff\xff"],
                "protocol": [_hello(protocol_version=9)],
                # A version 1 bot, and one that does not say (read as 1), are refused too.
                "protocol_v1": [_hello(protocol_version=1)],
                "protocol_unset": [_hello(protocol_version=0)],
                "games": [_hello(games=["chess"])],
            }
            results = {
                name: await _exchange(address, messages, 2) for name, messages in cases.items()
            }
            results["unknown_game"] = await _exchange(
                address, [_hello(), pb.BotMessage(move=pb.Move(game_id="nope", action="x"))], 2
            )
            results["welcome"] = await _exchange(address, [_hello(games=["TETRESS"])], 1)
            return results
        finally:
            await server.stop(0)

    results = asyncio.run(main())
    expected = {
        "token": pb.ERROR_CODE_UNAUTHENTICATED,
        "no_hello": pb.ERROR_CODE_BAD_MESSAGE,
        "garbage": pb.ERROR_CODE_BAD_MESSAGE,
        "protocol": pb.ERROR_CODE_UNSUPPORTED_PROTOCOL,
        "protocol_v1": pb.ERROR_CODE_UNSUPPORTED_PROTOCOL,
        "protocol_unset": pb.ERROR_CODE_UNSUPPORTED_PROTOCOL,
        "games": pb.ERROR_CODE_NO_GAMES,
    }
    for name, code in expected.items():
        replies = results[name]
        assert len(replies) == 1, (name, replies)
        assert replies[0].error.code == code and replies[0].error.fatal, (name, replies)
        assert replies[0].error.message
    welcome, error = results["unknown_game"]
    assert welcome.WhichOneof("kind") == "welcome"
    assert error.error.code == pb.ERROR_CODE_UNKNOWN_GAME and not error.error.fatal
    (welcome,) = results["welcome"]
    assert welcome.welcome.games == ["tetress"] and welcome.welcome.session_id
    assert welcome.welcome.protocol_version == pb.PROTOCOL_VERSION_CURRENT == 2
    # The refusal names both versions, so the bot's author knows what to install.
    refusal = results["protocol_v1"][0].error.message
    assert "speaks protocol version 1" in refusal and "this referee speaks 2" in refusal


@pytest.mark.slow
def test_tls_listener_welcomes_a_bot(tmp_path: Path) -> None:
    """With a certificate and key the server speaks TLS (and only TLS) on its port."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )

    async def main() -> list[pb.RefereeMessage]:
        server = RefereeServer(games=["tetress"])
        address = await server.start("127.0.0.1:0", TlsFiles(str(cert), str(key)))
        try:
            credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
            return await _exchange(address, [_hello()], 1, credentials)
        finally:
            await server.stop(0)

    (welcome,) = asyncio.run(main())
    assert welcome.WhichOneof("kind") == "welcome"


def test_reflection_lists_the_referee_and_health_services() -> None:
    """Server reflection names the referee service (grpcurl and friends work)."""
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    async def main() -> set[str]:
        server = RefereeServer(games=["tetress"])
        address = await server.start("127.0.0.1:0")
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = reflection_pb2_grpc.ServerReflectionStub(channel)
                request = reflection_pb2.ServerReflectionRequest(list_services="")
                call = stub.ServerReflectionInfo(iter([request]))
                names: set[str] = set()
                async for response in call:
                    names |= {s.name for s in response.list_services_response.service}
                return names
        finally:
            await server.stop(0)

    names = asyncio.run(main())
    assert {"tetromino.referee.v1.Referee", "grpc.health.v1.Health"} <= names
