"""Referee benchmarks: move-cycle overhead, games per second, and ``referee match`` end to end.

    python bench/referee.py [--json] [--games N] [--cycle-games N]

Prints a table (or, with ``--json``, one JSON object as the last line) with:

* ``move_cycle_ratio``: the median full referee move cycle (request sent, bot answers,
  validation, next request sent) divided by the median bare ``grpc.aio`` bidirectional
  ping-pong with the same message sizes, both measured here in the same run, with the same
  kind of client process. The bots in the cycle answer from a precomputed game, so the cycle
  measures the referee and the transport, not a bot's thinking.
* ``games_per_s``: complete random-vs-random games (the SDK's example random bot) through the
  server over persistent bot sessions.
* ``match_cli_s``: one ``referee match`` of two random bots, end to end, process start included.
* ``cpu_measure_*``: the cost of a CPU clock's measuring, which happens once per move (one
  reading of the answering bot's CPU time): one reading from a bot's cgroup and one from its
  process tree (the fallback without a cgroup), in microseconds and as a share of the move
  cycle (the goal is under 5%), and the move cycle itself with process-tree meters on both
  seats, against the plain cycle of the same rounds (``cpu_metered_cycle_ratio``).
* ``greedy_move_cycle_ms_python``/``_cpp``/``_js`` and ``greedy_cpp_vs_python``: the greedy
  example bot of each language playing itself (``--greedy-games`` games each, alternated), the
  median time from one move observed at the referee to the next: the bot's one-ply search
  included (bench/referee_langs.py; build clients/cpp and run ``npm ci`` in clients/js first).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: The client processes' program (the echo client and the scripted bots).
BOTS = str(ROOT / "bench" / "referee_bots.py")

from bench.common import random_scripts  # noqa: E402


def _identity(data: bytes) -> bytes:
    return data


# -- measurements ------------------------------------------------------------------------------


def _is_player(player: str) -> Any:
    return lambda session: session.identity.player_id == player


def _spawn_client(address: str, mode: str, token: str, script: str = "") -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, BOTS, address, mode, token, script],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


async def _move_cycle(
    scripts: list[list[str]], script_path: str, metered: bool = False
) -> dict[str, float]:
    from engine.registry import load_game
    from referee.match.runner import MatchRunner
    from referee.sandbox.cpu import TreeCpu
    from referee.server.app import RefereeServer
    from referee.server.auth import TokenTable

    server = RefereeServer(auth=TokenTable({"a": "a", "b": "b"}), games=["tetress"])
    address = await server.start("127.0.0.1:0")
    procs = [_spawn_client(address, "script", t, script_path) for t in ("a", "b")]
    try:
        sessions = [await server.lobby.wait_for(_is_player(p), 30) for p in ("a", "b")]
        game = load_game("tetress")
        stamps: list[list[float]] = []
        overheads: list[float] = []

        class Clock:
            def __init__(self) -> None:
                self.times: list[float] = []

            def on_move(self, state: Any, move: Any, clocks: Any) -> None:
                self.times.append(time.perf_counter())

            def on_end(self, state: Any, report: Any) -> None:
                return None

        # One game first, not timed, with every request's size taken as it goes to the wire.
        sizes = await _sizing_game(game, sessions)
        for _ in scripts:
            clock = Clock()
            meters = [TreeCpu(proc.pid).seconds for proc in procs] if metered else [None, None]
            runner = MatchRunner(game, sessions, observer=clock, cpu_meters=meters)
            runner.overheads = overheads
            report = await runner.run()
            assert report.end is not None and report.end.verdict in ("normal", "turn_limit")
            stamps.append(clock.times)
        for session in sessions:
            await session.goodbye("done")
    finally:
        for proc in procs:
            await asyncio.to_thread(proc.wait, 10)
        await server.stop(0)
    cycles = [b - a for times in stamps for a, b in itertools.pairwise(times)]
    request_size = int(statistics.median(sizes.values()))
    return {
        "cycle_median_us": statistics.median(cycles) * 1e6,
        "cycle_p90_us": statistics.quantiles(cycles, n=10)[-1] * 1e6,
        # The referee's own share: answer read off the stream to next request handed to gRPC.
        "own_median_us": statistics.median(overheads) * 1e6,
        "cycles": len(cycles),
        "request_bytes": request_size,
        "request_bytes_ply_1": sizes.get(1, 0),
        "request_bytes_ply_100": sizes.get(100, 0),
    }


async def _sizing_game(game: Any, sessions: list[Any]) -> dict[int, int]:
    """Play one game (the scripted clients' first, the longest script) and return the size in
    bytes of each move request as handed to gRPC, by ply."""
    from client_sdk.proto import referee_pb2 as pb
    from referee.match.runner import MatchRunner

    sizes: dict[int, int] = {}
    originals = [session.send_bytes for session in sessions]

    def measuring(send: Any) -> Any:
        async def send_bytes(data: bytes) -> float:
            message = pb.RefereeMessage.FromString(data)
            if message.WhichOneof("kind") == "move_request":
                sizes[message.move_request.ply] = len(data)
            result: float = await send(data)
            return result

        return send_bytes

    for session, send in zip(sessions, originals, strict=True):
        session.send_bytes = measuring(send)
    try:
        await MatchRunner(game, sessions, labels={"script": "longest"}).run()
    finally:
        for session, send in zip(sessions, originals, strict=True):
            session.send_bytes = send
    return sizes


async def _ping_pong(request_bytes: int, reply_bytes: int, rounds: int, clients: int = 1) -> float:
    """Median round trip (us) of a bare grpc.aio server writing ``request_bytes`` and reading
    a ``reply_bytes`` answer, with ``clients`` client processes taking turns."""
    import grpc

    contexts: list[Any] = []
    ready = asyncio.Event()
    finished = asyncio.Event()

    async def handler(messages: Any, context: Any) -> None:
        await context.read()  # the client's hello
        contexts.append(context)
        if len(contexts) == clients:
            ready.set()
        await finished.wait()

    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "tetromino.referee.v1.Referee",
                {
                    "Play": grpc.stream_stream_rpc_method_handler(
                        handler, request_deserializer=_identity, response_serializer=_identity
                    )
                },
            ),
        )
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    procs = [_spawn_client(f"127.0.0.1:{port}", "echo", str(reply_bytes)) for _ in range(clients)]
    payload = b"q" * request_bytes
    times: list[float] = []
    try:
        await asyncio.wait_for(ready.wait(), 60)
        for i in range(rounds):
            context = contexts[i % clients]
            times.append(time.perf_counter())
            await context.write(payload)
            await context.read()
        times.append(time.perf_counter())
    finally:
        finished.set()
        await server.stop(0)
        for proc in procs:
            await asyncio.to_thread(proc.wait, 10)
    warm = times[rounds // 10 :]
    return statistics.median(b - a for a, b in itertools.pairwise(warm)) * 1e6


async def _games_per_s(games: int, pairs: int) -> dict[str, float]:
    from engine.registry import load_game
    from referee.match.runner import MatchRunner
    from referee.sandbox.isolation import Isolation
    from referee.sandbox.launch import BotSpec, launch
    from referee.server.app import RefereeServer
    from referee.server.auth import TokenTable

    players = [f"p{i}" for i in range(2 * pairs)]
    server = RefereeServer(auth=TokenTable({p: p for p in players}), games=["tetress"])
    address = await server.start("127.0.0.1:0")
    spec = BotSpec("sdk", "client_sdk.examples.random_bot")
    # Uncontained on TCP loopback: this figure is the referee's own throughput; the sandbox's
    # cost (Unix socket, bwrap start-up) is what bench/sandbox.py measures.
    bots = [await launch(spec, address, p, isolation=Isolation.NONE) for p in players]
    try:
        sessions = [await server.lobby.wait_for(_is_player(p), 60) for p in players]
        game = load_game("tetress")
        plies = 0

        async def pair(a: Any, b: Any, count: int) -> int:
            total = 0
            for i in range(count):
                seats = [a, b] if i % 2 == 0 else [b, a]
                report = await MatchRunner(game, seats).run()
                assert report.end is not None and report.end.verdict in ("normal", "turn_limit")
                total += report.plies
            return total

        per_pair = max(1, games // pairs)
        start = time.perf_counter()
        counts = await asyncio.gather(
            *(pair(sessions[2 * i], sessions[2 * i + 1], per_pair) for i in range(pairs))
        )
        elapsed = time.perf_counter() - start
        plies = sum(counts)
        for session in sessions:
            await session.goodbye("done")
    finally:
        await asyncio.gather(*(bot.stop(2) for bot in bots))
        await server.stop(0)
    played = per_pair * pairs
    return {"games_per_s": played / elapsed, "games": played, "plies_per_s": plies / elapsed}


def _match_cli() -> float:
    start = time.perf_counter()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "referee.commands.main",
            "match",
            "client_sdk.examples.random_bot",
            "client_sdk.examples.random_bot",
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    elapsed = time.perf_counter() - start
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["verdict"] in ("normal", "turn_limit"), result
    return elapsed


async def _cpu_reading_us(readings: int = 2000) -> dict[str, Any]:
    """Microseconds per reading of a running bot's CPU time: from its cgroup (where this
    machine gives it one) and from its process tree."""
    from referee.sandbox import BotProcess
    from referee.sandbox.cpu import BotCpu, TreeCpu, bot_cgroup_of

    proc = await BotProcess.start([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        # As at a game's start: the bot has joined its cgroups (its launcher's shim does that
        # just after the process starts), where the machine gives it any.
        deadline = time.monotonic() + 10
        while bot_cgroup_of(proc.pid) is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        meter = BotCpu(proc.pid)
        meter.seconds()  # the first reading finds the bot's cgroup
        t0 = time.perf_counter()
        for _ in range(readings):
            meter.seconds()
        own = (time.perf_counter() - t0) / readings * 1e6
        tree = TreeCpu(proc.pid)
        t0 = time.perf_counter()
        for _ in range(readings):
            tree.seconds()
        tree_us = (time.perf_counter() - t0) / readings * 1e6
        return {"cpu_measure_us": own, "cpu_measure_tree_us": tree_us, "method": meter.method}
    finally:
        await proc.stop(0.5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--cycle-games", type=int, default=20)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3, help="cycle/ping-pong rounds")
    parser.add_argument("--greedy-games", type=int, default=2, help="greedy games per language")
    args = parser.parse_args()
    from referee.telemetry import logs as referee_logging

    referee_logging.configure("console", "WARNING")
    rounds = _rounds(random_scripts(args.cycle_games, args.seed), args.rounds)
    reading = asyncio.run(_cpu_reading_us())
    games = asyncio.run(_games_per_s(args.games, args.pairs))
    match_s = _match_cli()
    from referee_langs import greedy_cycles

    greedy = asyncio.run(greedy_cycles(args.greedy_games))
    result = {
        **_cycle_figures(rounds),
        "games_per_s": round(games["games_per_s"], 2),
        "games_played": games["games"],
        "bot_pairs": args.pairs,
        "plies_per_s": round(games["plies_per_s"], 1),
        "match_cli_s": round(match_s, 3),
        **_cpu_figures(rounds, reading),
        **greedy,
        "cpus": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>22}  {value}")
    return 0


@dataclass
class _Rounds:
    """Each round's plain move cycle, metered move cycle, and one- and two-client ping-pong."""

    cycles: list[dict[str, float]] = field(default_factory=list)
    metered: list[dict[str, float]] = field(default_factory=list)
    pings: list[float] = field(default_factory=list)
    pairs: list[float] = field(default_factory=list)

    def median(self, key: str) -> float:
        """The median over the rounds of one figure of the plain move cycle."""
        return statistics.median(c[key] for c in self.cycles)


def _rounds(scripts: list[list[str]], count: int) -> _Rounds:
    """Cycle and ping-pong alternate, so that a noisy machine disturbs both alike (the ratio
    reported is the median of the per-round ratios)."""
    rounds = _Rounds()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scripts.json")
        Path(path).write_text(json.dumps(scripts))
        for _ in range(count):
            rounds.cycles.append(asyncio.run(_move_cycle(scripts, path)))
            rounds.metered.append(asyncio.run(_move_cycle(scripts, path, metered=True)))
            ping_rounds = max(2000, int(rounds.cycles[-1]["cycles"]))
            size = int(rounds.cycles[-1]["request_bytes"])
            rounds.pings.append(asyncio.run(_ping_pong(size, 40, ping_rounds)))
            rounds.pairs.append(asyncio.run(_ping_pong(size, 40, ping_rounds, clients=2)))
    return rounds


def _cycle_figures(rounds: _Rounds) -> dict[str, Any]:
    """The move cycle against the bare ping-pong, and the size of a move request."""
    cycles = rounds.cycles
    ratios = [c["cycle_median_us"] / p for c, p in zip(cycles, rounds.pings, strict=True)]
    return {
        "move_cycle_ratio": round(statistics.median(ratios), 3),
        "move_cycle_ratios": [round(r, 3) for r in ratios],
        "move_cycle_median_us": round(rounds.median("cycle_median_us"), 1),
        "move_cycle_p90_us": round(rounds.median("cycle_p90_us"), 1),
        "referee_own_median_us": round(rounds.median("own_median_us"), 1),
        "ping_pong_median_us": round(statistics.median(rounds.pings), 1),
        # The same ping-pong with two clients taking turns, as the two bots of a game do:
        # how much of the cycle is the alternation itself.
        "ping_pong_two_clients_us": round(statistics.median(rounds.pairs), 1),
        "move_cycle_ratio_two_clients": round(
            statistics.median(
                c["cycle_median_us"] / p for c, p in zip(cycles, rounds.pairs, strict=True)
            ),
            3,
        ),
        "request_bytes": int(rounds.median("request_bytes")),
        # A request's size early and late in a game: the protocol keeps it flat.
        "request_bytes_ply_1": int(rounds.median("request_bytes_ply_1")),
        "request_bytes_ply_100": int(rounds.median("request_bytes_ply_100")),
        "cycles_measured": int(rounds.median("cycles")),
    }


def _cpu_figures(rounds: _Rounds, reading: dict[str, Any]) -> dict[str, Any]:
    """One reading per move (the answer's): its cost against the move cycle."""
    cycle_us = rounds.median("cycle_median_us")
    metered_ratios = [
        m["cycle_median_us"] / c["cycle_median_us"]
        for m, c in zip(rounds.metered, rounds.cycles, strict=True)
    ]
    return {
        "cpu_measure_method": reading["method"],
        "cpu_measure_us": round(reading["cpu_measure_us"], 2),
        "cpu_measure_tree_us": round(reading["cpu_measure_tree_us"], 2),
        "cpu_measure_share": round(reading["cpu_measure_us"] / cycle_us, 4),
        "cpu_measure_tree_share": round(reading["cpu_measure_tree_us"] / cycle_us, 4),
        "cpu_metered_cycle_median_us": round(
            statistics.median(m["cycle_median_us"] for m in rounds.metered), 1
        ),
        "cpu_metered_cycle_ratio": round(statistics.median(metered_ratios), 3),
    }


if __name__ == "__main__":
    sys.exit(main())
