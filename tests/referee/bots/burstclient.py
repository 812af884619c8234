"""Opens COUNT sessions at once against a referee (raw protocol, no retries), holds every
admitted one until told to stop, and prints one JSON line: each session's first answer.

    python burstclient.py ADDRESS FIRST COUNT STREAMS_PER_CHANNEL

Each session's outcome is ``welcome``, ``error:CODE:message`` (told why not) or
``status:CODE`` (the stream ended with no word from the referee). The JSON line is printed once
every session has its answer; the process then waits for a line on stdin (or EOF) and exits.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from typing import Any

import grpc

from client_sdk.proto import referee_pb2 as pb

METHOD = "/tetromino.referee.v1.Referee/Play"


def _identity(data: bytes) -> bytes:
    return data


async def _one(channel: Any, name: str) -> tuple[str, Any]:
    call = channel.stream_stream(
        METHOD, request_serializer=_identity, response_deserializer=_identity
    )()
    version = getattr(pb, "PROTOCOL_VERSION_CURRENT", 1)
    hello = pb.Hello(bot_name=name, protocol_version=version, max_games=1)
    try:
        await call.write(pb.BotMessage(hello=hello).SerializeToString())
        data = await call.read()
    except grpc.RpcError as exc:
        return f"status:{exc.code().name}", call
    if data is grpc.aio.EOF:
        return f"status:{(await call.code()).name}", call
    first = pb.RefereeMessage.FromString(data)
    if first.WhichOneof("kind") == "welcome":
        return "welcome", call
    if first.WhichOneof("kind") == "error":
        code = pb.ErrorCode.Name(first.error.code)
        return f"error:{code}:{first.error.message}", call
    return f"other:{first.WhichOneof('kind')}", call


async def main(address: str, first: int, count: int, per_channel: int) -> None:
    channels = [
        grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(-(-count // per_channel))
    ]
    answers = await asyncio.gather(
        *(_one(channels[i // per_channel], f"burst{first + i}") for i in range(count))
    )
    print(json.dumps(Counter(outcome for outcome, _ in answers)), flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    for _, call in answers:
        call.cancel()
    for channel in channels:
        await channel.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])))
