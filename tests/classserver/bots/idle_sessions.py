"""Many idle sessions in one process: each connects, says Hello, and never answers (nor reads).

``python idle_sessions.py --server HOST:PORT --count N [--token T ...] [--name idle]``: the N
sessions are named ``NAME1`` ... ``NAMEN`` and take the tokens given in turn (a token may hold
several sessions under different names). Prints ``connected N`` once every stream is open,
then waits to be killed. Used by the casual-pairing test and ``bench/casual.py`` (the bot
that must not be farmed).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import grpc

from client_sdk.proto import referee_pb2 as pb


def _hello(name: str, token: str) -> bytes:
    hello = pb.Hello(
        bot_name=name,
        bot_version="1",
        token=token,
        sdk_version="idle",
        protocol_version=pb.PROTOCOL_VERSION_CURRENT,
    )
    return pb.BotMessage(hello=hello).SerializeToString()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--token", action="append", default=[])
    parser.add_argument("--name", default="idle")
    args = parser.parse_args()
    channels = [grpc.aio.insecure_channel(args.server) for _ in range(args.count)]
    calls = []
    for i, channel in enumerate(channels, 1):
        play = channel.stream_stream(
            "/tetromino.referee.v1.Referee/Play",
            request_serializer=lambda b: b,
            response_deserializer=lambda b: b,
        )
        call = play()
        token = args.token[i % len(args.token)] if args.token else ""
        await call.write(_hello(f"{args.name}{i}", token))
        calls.append(call)
    print(f"connected {len(calls)}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
