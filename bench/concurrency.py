"""Many games at once on one referee server, played by fast (scripted) bots.

    python bench/concurrency.py [--json] [--games N] [--clients K]

N games start at the same moment on one server (2N bot sessions, spread over K client
processes, each session a long-lived stream answering instantly from a precomputed game).
Prints a table (or, with ``--json``, one JSON object as the last line) with:

* ``concurrent_games``: the most games in play at the same moment (a game counts from its
  first accepted move to its end);
* ``overhead_p99_ms`` (and p50, max): the referee's own time per move under that load, from
  the moment the reader task stamped a move's arrival to the moment the next request was
  handed to the transport (validation, bookkeeping, scheduling delay on the busy event loop);
* ``timeouts``: moves that ran out of time (every bot answers at once, well within the limit,
  so each one is a referee failure; target 0);
* ``moves_per_s``, ``elapsed_s``, verdict counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

# Running as bench/concurrency.py puts bench/ first on sys.path, where bench/referee.py would
# shadow the referee package.
ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

METHOD = "/tetromino.referee.v1.Referee/Play"
STREAMS_PER_CHANNEL = 50


def _identity(data: bytes) -> bytes:
    return data


# -- the client processes --------------------------------------------------------------------


async def _session(channel: Any, name: str, scripts: list[list[str]]) -> None:
    import grpc

    from client_sdk.proto import referee_pb2 as pb

    call = channel.stream_stream(
        METHOD, request_serializer=_identity, response_deserializer=_identity
    )()
    hello = pb.Hello(bot_name=name, bot_version="1", sdk_version="bench", max_games=1)
    await call.write(pb.BotMessage(hello=hello).SerializeToString())
    games: dict[str, list[str]] = {}
    while True:
        data = await call.read()
        if data is grpc.aio.EOF:
            return
        message = pb.RefereeMessage.FromString(data)
        kind = message.WhichOneof("kind")
        if kind == "move_request":
            req = message.move_request
            script = games.get(req.game_id) or scripts[int(req.info.labels["script"])]
            move = pb.Move(game_id=req.game_id, ply=req.ply, action=script[req.ply])
            await call.write(pb.BotMessage(move=move).SerializeToString())
        elif kind == "game_start":
            start = message.game_start
            games[start.game_id] = scripts[int(start.info.labels["script"])]
        elif kind == "game_over":
            games.pop(message.game_over.game_id, None)
        elif kind == "goodbye" or (kind == "error" and message.error.fatal):
            await call.done_writing()
            return


async def _client(address: str, first: int, count: int, script_path: str) -> None:
    import grpc

    scripts = json.loads(Path(script_path).read_text())
    channels = [
        grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range((count + STREAMS_PER_CHANNEL - 1) // STREAMS_PER_CHANNEL)
    ]
    await asyncio.gather(
        *(
            _session(channels[i // STREAMS_PER_CHANNEL], f"b{first + i}", scripts)
            for i in range(count)
        ),
        return_exceptions=True,
    )
    for channel in channels:
        await channel.close()


# -- the server side ------------------------------------------------------------------------


def _scripts(count: int, seed: int) -> list[list[str]]:
    from engine.registry import load_game

    game = load_game("tetress")
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        state = game.new_state()
        moves = []
        while state.outcome() is None:
            move = rng.choice(list(state.legal_moves))
            moves.append(game.move_to_text(move))
            state.apply(move)
        out.append(moves)
    return out


async def _run(games: int, clients: int, scripts: list[list[str]], path: str) -> dict[str, Any]:
    from engine.registry import load_game
    from referee.clock import TimeControl
    from referee.match import MatchRunner
    from referee.server import RefereeServer

    server = RefereeServer(games=["tetress"])
    address = await server.start("127.0.0.1:0")
    sessions_wanted = 2 * games
    per = -(-sessions_wanted // clients)
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--client",
                address,
                str(i * per),
                str(min(per, sessions_wanted - i * per)),
                path,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        for i in range(clients)
        if i * per < sessions_wanted
    ]
    game = load_game("tetress")
    try:
        deadline = time.monotonic() + 120
        while len(server.lobby) < sessions_wanted:
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {len(server.lobby)} of {sessions_wanted} connected")
            await asyncio.sleep(0.1)
        by_name = {s.name: s for s in server.lobby.sessions()}
        in_play = 0
        peak = 0
        overheads: list[float] = []
        # Bots answer at once: a move limit of 5 s (0.5 s grace) is far beyond what any move
        # needs, so every timeout is the referee's fault.
        control = TimeControl(game_time_s=180, move_time_s=5.0, grace_s=0.5)

        class InPlay:
            """Counts a game as in play from its first accepted move to its end."""

            def __init__(self) -> None:
                self.moved = False

            def on_move(self, state: Any, move: Any, clocks: Any) -> None:
                nonlocal in_play, peak
                if not self.moved:
                    self.moved = True
                    in_play += 1
                    peak = max(peak, in_play)

            def on_end(self, state: Any, report: Any) -> None:
                nonlocal in_play
                if self.moved:
                    in_play -= 1

        async def one(i: int) -> Any:
            runner = MatchRunner(
                game,
                [by_name[f"b{2 * i}"], by_name[f"b{2 * i + 1}"]],
                time_control=control,
                labels={"script": str(i % len(scripts))},
                observer=InPlay(),
            )
            runner.overheads = overheads
            return await runner.run()

        started = time.perf_counter()
        reports = await asyncio.gather(*(one(i) for i in range(games)))
        elapsed = time.perf_counter() - started
        for session in server.lobby.sessions():
            await session.goodbye("done")
    finally:
        for proc in procs:
            try:
                await asyncio.to_thread(proc.wait, 20)
            except subprocess.TimeoutExpired:
                proc.kill()
        await server.stop(0)
    verdicts = Counter(str(r.end.verdict) for r in reports if r.end is not None)
    moves = sum(r.plies for r in reports)
    cuts = statistics.quantiles(overheads, n=100)
    return {
        "concurrent_games": peak,
        "games": games,
        "overhead_p50_ms": round(statistics.median(overheads) * 1e3, 3),
        "overhead_p99_ms": round(cuts[98] * 1e3, 3),
        "overhead_max_ms": round(max(overheads) * 1e3, 3),
        "timeouts": verdicts.get("time", 0),
        "verdicts": dict(verdicts),
        "moves": moves,
        "moves_per_s": round(moves / elapsed, 1),
        "elapsed_s": round(elapsed, 2),
        "client_processes": len(procs),
        "cpus": os.cpu_count(),
    }


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        asyncio.run(_client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from referee import logging as referee_logging

    referee_logging.configure("console", "WARNING")
    scripts = _scripts(20, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scripts.json")
        Path(path).write_text(json.dumps(scripts))
        result = asyncio.run(_run(args.games, args.clients, scripts, path))
    if args.json:
        print(json.dumps(result), flush=True)
    else:
        for key, value in result.items():
            print(f"{key:>18}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
