"""The bench bots of ``bench/concurrency.py``: one client process playing many sessions.

    python bench/concurrency_bots.py ADDRESS FIRST COUNT SCRIPTS THINK_MS [STREAMS]

plays sessions ``bFIRST`` .. ``bFIRST+COUNT-1`` (``STREAMS`` per connection, default 50),
each a long-lived stream answering every request from the precomputed game ``SCRIPTS`` names
(a JSON file), after a random wait in ``THINK_MS`` (``MIN-MAX``), and writes what it saw
(handshake times, refusals, its own CPU time) to ``SCRIPTS.FIRST.json``; :func:`client_reports`
adds them up.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

# Run as a script, bench/ comes first on sys.path, where bench/referee.py would shadow the
# referee package.
ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

from bench.common import referee_messages  # noqa: E402

METHOD = "/tetromino.referee.v1.Referee/Play"
#: Streams (sessions) sharing one channel, i.e. one TCP connection (an SDK bot has its own).
STREAMS_PER_CHANNEL = 50


def _identity(data: bytes) -> bytes:
    return data


#: Refusals a bench bot retries with back-off, as the SDK does (the server is busy or full).
RETRY_CODES = ("RESOURCE_EXHAUSTED", "CANCELLED", "UNAVAILABLE", "INTERNAL")


class Tally:
    """What one client process saw: handshake times and every refusal, by reason."""

    def __init__(self) -> None:
        self.handshake_s: list[float] = []
        self.refusals: Counter[str] = Counter()
        self.retries = 0
        self.failed = 0


async def _handshake(channel: Any, name: str, tally: Tally) -> tuple[Any, Any] | None:
    """Open a stream and say hello until welcomed; retries refusals with back-off."""
    import grpc

    from client_sdk.proto import referee_pb2 as pb

    hello = pb.Hello(
        bot_name=name,
        bot_version="1",
        sdk_version="bench",
        max_games=1,
        protocol_version=pb.PROTOCOL_VERSION_CURRENT,
    )
    delay = 0.25
    for _ in range(8):
        started = time.monotonic()
        call = channel.stream_stream(
            METHOD, request_serializer=_identity, response_deserializer=_identity
        )()
        why = ""
        try:
            await call.write(pb.BotMessage(hello=hello).SerializeToString())
            data = await call.read()
            if data is not grpc.aio.EOF:
                first = pb.RefereeMessage.FromString(data)
                if first.WhichOneof("kind") == "welcome":
                    tally.handshake_s.append(time.monotonic() - started)
                    return call, first
                why = pb.ErrorCode.Name(first.error.code).removeprefix("ERROR_CODE_")
            else:
                why = str(await call.code()).removeprefix("StatusCode.")
        except grpc.RpcError as exc:
            why = str(exc.code()).removeprefix("StatusCode.")
        tally.refusals[why] += 1
        if why not in RETRY_CODES and why != "SHUTTING_DOWN":
            break
        tally.retries += 1
        call.cancel()
        await asyncio.sleep(random.uniform(delay / 2, delay))
        delay = min(8.0, 2 * delay)
    tally.failed += 1
    return None


async def _session(
    channel: Any,
    name: str,
    scripts: list[list[str]],
    think: tuple[float, float],
    tally: Tally,
) -> None:
    from client_sdk.proto import referee_pb2 as pb

    opened = await _handshake(channel, name, tally)
    if opened is None:
        return
    call, _welcome = opened
    # Per game, every ply's answer already encoded: the bench bots stand in for thousands of
    # bot processes on the server's own two cores, so they spend as little CPU as they can.
    games: dict[str, list[bytes]] = {}
    async for kind, message in referee_messages(call):
        if kind == "move_request":
            req = message.move_request
            answers = games[req.game_id]
            if think[1] > 0:
                await asyncio.sleep(random.uniform(*think))
            await call.write(answers[req.ply])
        elif kind == "game_start":
            game_id = message.game_start.game_id
            script = scripts[int(message.game_start.info.labels["script"])]
            games[game_id] = [
                pb.BotMessage(
                    move=pb.Move(game_id=game_id, ply=ply, action=action)
                ).SerializeToString()
                for ply, action in enumerate(script)
            ]
        elif kind == "game_over":
            games.pop(message.game_over.game_id, None)
        elif kind == "goodbye" or (kind == "error" and message.error.fatal):
            await call.done_writing()
            return


async def _client(
    address: str,
    first: int,
    count: int,
    script_path: str,
    think: tuple[float, float],
    streams: int = STREAMS_PER_CHANNEL,
) -> None:
    import grpc

    scripts = json.loads(Path(script_path).read_text())
    channels = [
        grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range((count + streams - 1) // streams)
    ]
    tally = Tally()
    outcomes = await asyncio.gather(
        *(
            _session(channels[i // streams], f"b{first + i}", scripts, think, tally)
            for i in range(count)
        ),
        return_exceptions=True,
    )
    for channel in channels:
        await channel.close()
    times = os.times()
    report = {
        "cpu_s": times.user + times.system,
        "handshake_s": tally.handshake_s,
        "refusals": dict(tally.refusals),
        "retries": tally.retries,
        "failed": tally.failed,
        "errors": [repr(o)[:200] for o in outcomes if isinstance(o, BaseException)][:5],
    }
    Path(f"{script_path}.{first}.json").write_text(json.dumps(report))


def client_reports(path: str) -> dict[str, Any]:
    handshakes: list[float] = []
    refusals: Counter[str] = Counter()
    retries = failed = 0
    cpu_s = 0.0
    errors: list[str] = []
    for report_path in Path(path).parent.glob(Path(path).name + ".*.json"):
        report = json.loads(report_path.read_text())
        cpu_s += report["cpu_s"]
        handshakes += report["handshake_s"]
        refusals.update(report["refusals"])
        retries += report["retries"]
        failed += report["failed"]
        errors += report["errors"]
    cut = statistics.quantiles(handshakes, n=100)[98] if len(handshakes) > 1 else 0.0
    return {
        "handshake_p50_ms": round(statistics.median(handshakes) * 1e3, 1) if handshakes else 0,
        "handshake_p99_ms": round(cut * 1e3, 1),
        "client_refusals": dict(refusals),
        "client_retries": retries,
        "client_gave_up": failed,
        "client_errors": errors[:3],
        "client_cpu_s": round(cpu_s, 2),
    }


def main() -> int:
    address, first, count, script_path, think = sys.argv[1:6]
    streams = int(sys.argv[6]) if len(sys.argv) > 6 else STREAMS_PER_CHANNEL
    import grpc  # noqa: F401  (imported before the freeze below, like the rest of start-up)

    from client_sdk.proto import referee_pb2  # noqa: F401

    # One process holds hundreds of sessions that stand for as many bot processes: start-up
    # objects are frozen and young objects collected rarely, as ``referee serve`` does, so
    # the collector's passes over all of them do not stall every bot at once.
    gc.freeze()
    gc.set_threshold(50_000, 10, 10)
    low, high = (float(v) / 1e3 for v in think.split("-"))
    asyncio.run(_client(address, int(first), int(count), script_path, (low, high), streams))
    return 0


if __name__ == "__main__":
    sys.exit(main())
