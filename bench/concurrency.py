"""Many games at once on one referee server, played by scripted bots.

    python bench/concurrency.py [--json] [--games N] [--clients K] [--think-ms MIN-MAX]
                                [--gc serve|default] [--streams-per-connection N]
                                [--server-priority N] [--bots-priority N]

N games start at the same moment on one server (2N bot sessions, spread over K client
processes (``bench/concurrency_bots.py``), each session a long-lived stream playing a
precomputed game; with ``--think-ms`` each bot waits a random time in that range before each
move, like real ones, else it answers at once and saturates the server). Bench bots retry a
refused handshake with back-off, as the SDK does. The server runs with the garbage collector
settings of ``referee serve`` (``--gc default``: CPython's, for comparison). On a machine
shared with other work, ``--server-priority 15`` (root) gives the server the CPU it would have
on a machine of its own; the bots and the lag probe stay at the bench's own priority. Prints
a table (or, with ``--json``, one JSON object as the last line) with:

* ``connected`` (of ``sessions_wanted``), ``handshake_p99_ms`` (Hello to Welcome, at the
  bots), refusals seen by the bots and counted by the server;
* ``concurrent_games``: the most games in play at the same moment (a game counts from its
  first accepted move to its end); ``games_played`` (games whose two bots connected);
* ``overhead_p99_ms`` (and p50, max): the referee's own time per move, from the moment the
  reader task stamped a move's arrival to the moment the next request was handed to the
  transport (validation, bookkeeping, scheduling delay on the busy event loop); beside it the
  baselines of the same run: ``machine_lag_p99_ms`` (how late an idle event loop in a process
  of its own wakes from 5 ms sleeps: the machine's scheduling noise;
  ``overhead_p99_to_machine_lag``, the ratio) and the collector's pauses
  (``gc_max_pause_ms``, ``gc_total_ms``, full collections);
* ``timeouts``: moves that ran out of time (the limit is far above any bot's think time, so
  each one is a referee failure; target 0);
* ``moves_per_s``, ``elapsed_s``, verdict counts, ``server_cpu_ms_per_move`` (steadier than
  rates on a shared machine; ``client_cpu_ms_per_move``: the bench bots' share),
  ``server_rss_mb`` (peak) and ``idle_session_bytes``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Running as bench/concurrency.py puts bench/ first on sys.path, where bench/referee.py would
# shadow the referee package.
ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

#: The client processes' program (the bench bots).
BOTS = str(ROOT / "bench" / "concurrency_bots.py")

from bench.common import random_scripts  # noqa: E402
from bench.concurrency_meters import BASE_NICENESS, GcPauses, Meter, raise_priority  # noqa: E402


async def _probe(seconds: float) -> None:
    """The machine's own scheduling noise, for comparison: an idle event loop in a process
    of its own wakes from 5 ms sleeps; prints how late (ms) as one JSON list."""
    late: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        before = time.monotonic()
        await asyncio.sleep(0.005)
        late.append((time.monotonic() - before - 0.005) * 1e3)
    print(json.dumps(late), flush=True)


def _spawn(
    address: str, games: int, clients: int, path: str, think: str, streams: int, priority: int
) -> list[Any]:
    sessions_wanted = 2 * games
    per = -(-sessions_wanted // clients)
    procs = [
        subprocess.Popen(
            [sys.executable, BOTS, address, str(i * per), str(n), path, think, str(streams)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        for i in range(clients)
        if (n := min(per, sessions_wanted - i * per)) > 0
    ]
    for proc in procs:  # before they start threads of their own
        raise_priority(priority, proc.pid)
    return procs


async def _wait_connected(server: Any, wanted: int, deadline_s: float) -> float:
    """Seconds until ``wanted`` sessions are in the lobby, the deadline passed, or 20 s went
    by with no handshake under way or finished (the missing bots gave up)."""
    started = last_change = time.monotonic()
    seen = -1
    while len(server.lobby) < wanted:
        now = time.monotonic()
        counts = server.handshakes.snapshot()
        answered = counts["admitted"] + sum(counts["refused"].values())
        if answered != seen or counts["in_progress"]:
            seen, last_change = answered, now
        if now - started > deadline_s or now - last_change > 20:
            break
        await asyncio.sleep(0.05)
    return time.monotonic() - started


class InPlay:
    """Counts games in play: from a game's first accepted move to its end."""

    now = 0
    peak = 0

    def __init__(self) -> None:
        self.moved = False

    def on_move(self, state: Any, move: Any, clocks: Any) -> None:
        if not self.moved:
            self.moved = True
            InPlay.now += 1
            InPlay.peak = max(InPlay.peak, InPlay.now)

    def on_end(self, state: Any, report: Any) -> None:
        if self.moved:
            InPlay.now -= 1


async def _play(server: Any, games: int, scripts: list[list[str]]) -> tuple[list[Any], list[float]]:
    """Play every game whose two bots connected; returns the reports and the overheads."""
    from engine.registry import load_game
    from referee.match.clock import TimeControl
    from referee.match.runner import MatchRunner

    game = load_game("tetress")
    by_name = {s.name: s for s in server.lobby.sessions()}
    overheads: list[float] = []
    # A move limit of 5 s (0.5 s grace) is far beyond what any move needs (the slowest bots
    # think 1.5 s at most), so every timeout is the referee's fault.
    control = TimeControl(game_time_s=600, move_time_s=5.0, grace_s=0.5)

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

    playable = [i for i in range(games) if f"b{2 * i}" in by_name and f"b{2 * i + 1}" in by_name]
    reports = await asyncio.gather(*(one(i) for i in playable))
    return list(reports), overheads


@dataclass
class _Measures:
    """What one run measured in the server's process, as raw numbers: the baseline before the
    bots start, then the marks at "all connected" and "all played"."""

    rss_base: int
    cpu_start: float
    connect_s: float = 0.0
    connected: int = 0
    rss_idle: int = 0
    cpu_connected: float = 0.0
    loop_connected: float = 0.0
    elapsed: float = 0.0
    cpu_played: float = 0.0
    loop_played: float = 0.0
    reports: list[Any] = field(default_factory=list)
    overheads: list[float] = field(default_factory=list)
    machine_lag: list[float] = field(default_factory=list)
    gc_pauses: dict[str, Any] = field(default_factory=dict)


async def _run(
    games: int,
    clients: int,
    scripts: list[list[str]],
    path: str,
    think: str,
    tune_gc: bool,
    streams: int,
    bots_priority: int,
) -> dict[str, Any]:
    from referee.server.app import RefereeServer
    from referee.server.collector import tune_for_serving

    meter = Meter()
    server = RefereeServer(games=["tetress"])
    address = await server.start("127.0.0.1:0")
    if tune_gc:
        tune_for_serving()  # as ``referee serve`` does once started
    m = _Measures(rss_base=meter.rss(), cpu_start=meter.cpu_s())
    sampler = asyncio.create_task(meter.sample())
    procs = _spawn(address, games, clients, path, think, streams, bots_priority)
    try:
        await _measure(server, meter, m, games, scripts)
    finally:
        for proc in procs:
            try:
                await asyncio.to_thread(proc.wait, 30)
            except subprocess.TimeoutExpired:
                proc.kill()
        sampler.cancel()
        await server.stop(0)
    from bench.concurrency_bots import client_reports

    bots = client_reports(path)
    moves = sum(r.plies for r in m.reports)
    return {
        **_play_figures(m, games, moves),
        **bots,
        "server_refused": {k: v for k, v in server.handshakes.snapshot()["refused"].items() if v},
        **_noise_figures(m),
        **_cost_figures(m, meter.peak_rss, bots["client_cpu_s"], moves),
        "think_ms": think,
        "streams_per_connection": streams,
        "server_niceness": os.getpriority(os.PRIO_PROCESS, 0),
        "bots_niceness": BASE_NICENESS - bots_priority,
        "client_processes": len(procs),
        "cpus": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


async def _measure(
    server: Any, meter: Meter, m: _Measures, games: int, scripts: list[list[str]]
) -> None:
    """Wait for the bots, play the games beside the lag probe, and say goodbye to the bots,
    noting into ``m`` what each stage cost."""
    m.connect_s = await _wait_connected(server, 2 * games, 180)
    m.connected = len(server.lobby)
    await asyncio.sleep(1.0)  # let the last handshakes settle before measuring idle memory
    m.rss_idle = meter.rss()
    m.cpu_connected, m.loop_connected = meter.cpu_s(), meter.loop_cpu_s()
    started = time.perf_counter()
    pauses = GcPauses()
    probe = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--probe",
        "20",
        stdout=asyncio.subprocess.PIPE,
        start_new_session=True,  # a session (and scheduling group) of its own
    )
    os.setpriority(os.PRIO_PROCESS, probe.pid, BASE_NICENESS)
    m.reports, m.overheads = await _play(server, games, scripts)
    m.elapsed = time.perf_counter() - started
    pauses.close()
    m.gc_pauses = pauses.summary()
    m.machine_lag = json.loads((await probe.communicate())[0] or b"[0, 0]")
    m.cpu_played, m.loop_played = meter.cpu_s(), meter.loop_cpu_s()
    for session in server.lobby.sessions():
        await session.goodbye("done")


def _overhead_p99(m: _Measures) -> float:
    cuts = statistics.quantiles(m.overheads, n=100) if len(m.overheads) > 1 else [0.0] * 99
    return cuts[98]


def _play_figures(m: _Measures, games: int, moves: int) -> dict[str, Any]:
    """The games: how many, at once, how they ended, how fast, and the referee's overhead."""
    verdicts = Counter(str(r.end.verdict) for r in m.reports if r.end is not None)
    overheads = m.overheads
    return {
        "concurrent_games": InPlay.peak,
        "games": games,
        "games_played": len(m.reports),
        "overhead_p50_ms": round(statistics.median(overheads) * 1e3, 3) if overheads else 0,
        "overhead_p99_ms": round(_overhead_p99(m) * 1e3, 3),
        "overhead_max_ms": round(max(overheads, default=0.0) * 1e3, 3),
        "timeouts": verdicts.get("time", 0),
        "verdicts": dict(verdicts),
        "moves": moves,
        "moves_per_s": round(moves / m.elapsed, 1) if m.elapsed else 0.0,
        "elapsed_s": round(m.elapsed, 2),
        "sessions_wanted": 2 * games,
        "connected": m.connected,
        "connect_s": round(m.connect_s, 2),
    }


def _noise_figures(m: _Measures) -> dict[str, Any]:
    """The baselines of the same run: the machine's own lag and the collector's pauses."""
    lag_p99 = statistics.quantiles(m.machine_lag, n=100)[98]
    overhead_p99_ms = _overhead_p99(m) * 1e3
    return {
        "machine_lag_p99_ms": round(lag_p99, 2),
        # The baseline of the same run: how far above the machine's own noise the referee is.
        "overhead_p99_to_machine_lag": round(overhead_p99_ms / lag_p99, 2) if lag_p99 else None,
        **m.gc_pauses,
        "gc_threshold": list(gc.get_threshold()),
        "gc_frozen": gc.get_freeze_count(),
    }


def _cost_figures(m: _Measures, peak_rss: int, client_cpu_s: float, moves: int) -> dict[str, Any]:
    """Memory, and CPU per move of the server, its event loop and the bench bots."""
    per_move = max(1, moves)
    return {
        "server_rss_mb": round(peak_rss / 2**20, 1),
        "idle_session_bytes": round((m.rss_idle - m.rss_base) / max(1, m.connected)),
        "server_cpu_connect_s": round(m.cpu_connected - m.cpu_start, 2),
        "server_cpu_play_s": round(m.cpu_played - m.cpu_connected, 2),
        "server_cpu_ms_per_move": round((m.cpu_played - m.cpu_connected) * 1e3 / per_move, 4),
        "server_loop_cpu_ms_per_move": round(
            (m.loop_played - m.loop_connected) * 1e3 / per_move, 4
        ),
        "client_cpu_ms_per_move": round(client_cpu_s * 1e3 / per_move, 4),
    }


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--probe":
        asyncio.run(_probe(float(sys.argv[2])))
        return 0
    parser = _parser()
    args = parser.parse_args()
    if args.server_priority:
        raise_priority(args.server_priority)
    try:
        low, high = (float(v) for v in args.think_ms.split("-"))
    except ValueError:
        parser.error("--think-ms takes MIN-MAX in milliseconds, e.g. 500-1500")
    if not 0 <= low <= high:
        parser.error("--think-ms: need 0 <= MIN <= MAX")
    from referee.telemetry import logs as referee_logging

    referee_logging.configure("console", "WARNING")
    scripts = random_scripts(20, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scripts.json")
        Path(path).write_text(json.dumps(scripts))
        result = asyncio.run(
            _run(
                args.games,
                args.clients,
                scripts,
                path,
                args.think_ms,
                args.gc == "serve",
                args.streams_per_connection,
                args.bots_priority,
            )
        )
    if args.json:
        print(json.dumps(result), flush=True)
    else:
        for key, value in result.items():
            print(f"{key:>18}  {value}")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--gc",
        choices=("serve", "default"),
        default="serve",
        help="serve: the garbage collector settings referee serve uses once started (freeze, "
        "a higher first threshold); default: CPython's (default %(default)s)",
    )
    parser.add_argument(
        "--think-ms",
        default="0-0",
        metavar="MIN-MAX",
        help="each bot waits a random time in this range (ms) before each move (default 0-0: "
        "it answers at once, which saturates the server)",
    )
    parser.add_argument(
        "--streams-per-connection",
        type=int,
        default=50,
        metavar="N",
        help="bench bot sessions sharing one TCP connection (1: one each, as SDK bots have; "
        "default %(default)s)",
    )
    parser.add_argument(
        "--server-priority",
        type=int,
        default=0,
        metavar="N",
        help="run the server N nice levels above the bench bots and the machine's other work "
        "(needs root): on a shared machine, so that other work does not starve the server, as "
        "on a machine of its own (default 0)",
    )
    parser.add_argument(
        "--bots-priority",
        type=int,
        default=0,
        metavar="N",
        help="the same for the bench bots' processes (with --server-priority, the bench runs "
        "as on a quiet machine; the lag probe stays at the bench's own priority)",
    )
    return parser


if __name__ == "__main__":
    sys.exit(main())
