"""The client process of ``bench/referee.py``: a bare echo client for the gRPC ping-pong
baseline, or a scripted bot that plays precomputed games through the referee.

    python bench/referee_bots.py ADDRESS echo REPLY_BYTES
    python bench/referee_bots.py ADDRESS script TOKEN SCRIPTS_JSON
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

# Running as bench/referee_bots.py puts bench/ first on sys.path, where bench/referee.py would
# shadow the referee package.
ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

from bench.common import referee_messages  # noqa: E402

METHOD = "/tetromino.referee.v1.Referee/Play"


def _identity(data: bytes) -> bytes:
    return data


async def client(address: str, mode: str, token: str, script_path: str) -> None:
    import grpc

    from client_sdk.proto import referee_pb2 as pb

    channel = grpc.aio.insecure_channel(address)
    call = channel.stream_stream(
        METHOD, request_serializer=_identity, response_deserializer=_identity
    )()
    if mode == "echo":
        reply = b"r" * int(token)
        await call.write(b"hi")
        while True:
            data = await call.read()
            if data is grpc.aio.EOF:
                break
            await call.write(reply)
    else:
        scripts: list[list[str]] = json.loads(Path(script_path).read_text())
        hello = pb.Hello(
            bot_name="scripted",
            bot_version="1",
            token=token,
            sdk_version="bench",
            protocol_version=pb.PROTOCOL_VERSION_CURRENT,
        )
        await call.write(pb.BotMessage(hello=hello).SerializeToString())
        games: dict[str, list[str]] = {}
        started = 0
        async for kind, message in referee_messages(call):
            if kind == "move_request":
                req = message.move_request
                move = pb.Move(game_id=req.game_id, ply=req.ply, action=games[req.game_id][req.ply])
                await call.write(pb.BotMessage(move=move).SerializeToString())
            elif kind == "game_start":
                start = message.game_start
                if start.info.labels.get("script") == "longest":
                    games[start.game_id] = max(scripts, key=len)
                else:
                    games[start.game_id] = scripts[started % len(scripts)]
                    started += 1
            elif kind == "goodbye":
                break
    await channel.close()


if __name__ == "__main__":
    asyncio.run(client(*sys.argv[1:5]))
