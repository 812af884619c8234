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
import atexit
import contextlib
import gc
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

#: The client processes' program (the bench bots).
BOTS = str(ROOT / "bench" / "concurrency_bots.py")


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


class Meter:
    """This process's resident memory and CPU time (the server runs in it)."""

    def __init__(self) -> None:
        import psutil

        self._proc = psutil.Process()
        self.peak_rss = 0

    def rss(self) -> int:
        rss = int(self._proc.memory_info().rss)
        self.peak_rss = max(self.peak_rss, rss)
        return rss

    def cpu_s(self) -> float:
        times = self._proc.cpu_times()
        return float(times.user + times.system)

    def loop_cpu_s(self) -> float:
        """The event loop's thread alone (gRPC polls on threads of its own): the part that
        cannot use a second core."""
        import threading

        main = threading.main_thread().native_id
        return sum(t.user_time + t.system_time for t in self._proc.threads() if t.id == main)

    async def sample(self, every: float = 0.5) -> None:
        while True:
            self.rss()
            await asyncio.sleep(every)


class GcPauses:
    """The garbage collector's pauses in this process (they stall the event loop), with the
    generation each one collected."""

    def __init__(self) -> None:
        self.pauses: list[float] = []
        self.by_generation: list[list[float]] = [[], [], []]
        self._started = 0.0
        gc.callbacks.append(self._note)

    def _note(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            pause = time.perf_counter() - self._started
            self.pauses.append(pause)
            self.by_generation[info["generation"]].append(pause)

    def summary(self) -> dict[str, Any]:
        return {
            "gc_pauses": len(self.pauses),
            "gc_max_pause_ms": round(max(self.pauses, default=0.0) * 1e3, 2),
            "gc_total_ms": round(sum(self.pauses) * 1e3, 1),
            "gc_full_collections": len(self.by_generation[2]),
            "gc_full_max_ms": round(max(self.by_generation[2], default=0.0) * 1e3, 2),
        }

    def close(self) -> None:
        gc.callbacks.remove(self._note)


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


#: The niceness the bench was started with: its children (bots, probe) run at it, whatever
#: ``--server-priority`` gives the server.
BASE_NICENESS = os.getpriority(os.PRIO_PROCESS, 0)


def _raise_priority(levels: int, pid: int = 0) -> None:
    """Run process ``pid`` (0: this one) ``levels`` nice levels up. Call it before gRPC starts
    its threads: on Linux a thread's niceness is its own, inherited by the threads it starts.
    Where the kernel groups processes by session (autogroup), niceness only ranks a session's
    own processes, so the session's group is raised too: each bench bot process leads a
    session of its own; this process is in its caller's, whose group is put back on exit."""
    os.setpriority(os.PRIO_PROCESS, pid, BASE_NICENESS - levels)
    path = f"/proc/{pid or 'self'}/autogroup"
    try:
        with open(path) as group:
            before = group.read().split()[-1]  # "/autogroup-N nice K"
        _write_group(path, str(BASE_NICENESS - levels))
    except OSError:
        return  # no autogroup: plain niceness is enough
    if not pid:
        atexit.register(_write_group, path, before)


def _write_group(path: str, nice: str) -> None:
    with contextlib.suppress(OSError), open(path, "w") as group:
        group.write(nice)


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
        _raise_priority(priority, proc.pid)
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
    rss_base = meter.rss()
    sampler = asyncio.create_task(meter.sample())
    cpu_start = meter.cpu_s()
    procs = _spawn(address, games, clients, path, think, streams, bots_priority)
    try:
        connect_s = await _wait_connected(server, 2 * games, 180)
        connected = len(server.lobby)
        await asyncio.sleep(1.0)  # let the last handshakes settle before measuring idle memory
        rss_idle = meter.rss()
        cpu_connected, loop_connected = meter.cpu_s(), meter.loop_cpu_s()
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
        reports, overheads = await _play(server, games, scripts)
        elapsed = time.perf_counter() - started
        pauses.close()
        machine_lag = json.loads((await probe.communicate())[0] or b"[0, 0]")
        cpu_played, loop_played = meter.cpu_s(), meter.loop_cpu_s()
        for session in server.lobby.sessions():
            await session.goodbye("done")
    finally:
        for proc in procs:
            try:
                await asyncio.to_thread(proc.wait, 30)
            except subprocess.TimeoutExpired:
                proc.kill()
        sampler.cancel()
        await server.stop(0)
    from bench.concurrency_bots import client_reports

    clients = client_reports(path)
    verdicts = Counter(str(r.end.verdict) for r in reports if r.end is not None)
    moves = sum(r.plies for r in reports)
    cuts = statistics.quantiles(overheads, n=100) if len(overheads) > 1 else [0.0] * 99
    lag_p99 = statistics.quantiles(machine_lag, n=100)[98]
    return {
        "concurrent_games": InPlay.peak,
        "games": games,
        "games_played": len(reports),
        "overhead_p50_ms": round(statistics.median(overheads) * 1e3, 3) if overheads else 0,
        "overhead_p99_ms": round(cuts[98] * 1e3, 3),
        "overhead_max_ms": round(max(overheads, default=0.0) * 1e3, 3),
        "timeouts": verdicts.get("time", 0),
        "verdicts": dict(verdicts),
        "moves": moves,
        "moves_per_s": round(moves / elapsed, 1) if elapsed else 0.0,
        "elapsed_s": round(elapsed, 2),
        "sessions_wanted": 2 * games,
        "connected": connected,
        "connect_s": round(connect_s, 2),
        **clients,
        "server_refused": {k: v for k, v in server.handshakes.snapshot()["refused"].items() if v},
        "machine_lag_p99_ms": round(lag_p99, 2),
        # The baseline of the same run: how far above the machine's own noise the referee is.
        "overhead_p99_to_machine_lag": round(cuts[98] * 1e3 / lag_p99, 2) if lag_p99 else None,
        **pauses.summary(),
        "gc_threshold": list(gc.get_threshold()),
        "gc_frozen": gc.get_freeze_count(),
        "server_rss_mb": round(meter.peak_rss / 2**20, 1),
        "idle_session_bytes": round((rss_idle - rss_base) / max(1, connected)),
        "server_cpu_connect_s": round(cpu_connected - cpu_start, 2),
        "server_cpu_play_s": round(cpu_played - cpu_connected, 2),
        "server_cpu_ms_per_move": round((cpu_played - cpu_connected) * 1e3 / max(1, moves), 4),
        "server_loop_cpu_ms_per_move": round(
            (loop_played - loop_connected) * 1e3 / max(1, moves), 4
        ),
        "client_cpu_ms_per_move": round(clients["client_cpu_s"] * 1e3 / max(1, moves), 4),
        "think_ms": think,
        "streams_per_connection": streams,
        "server_niceness": os.getpriority(os.PRIO_PROCESS, 0),
        "bots_niceness": BASE_NICENESS - bots_priority,
        "client_processes": len(procs),
        "cpus": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--probe":
        asyncio.run(_probe(float(sys.argv[2])))
        return 0
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
    args = parser.parse_args()
    if args.server_priority:
        _raise_priority(args.server_priority)
    try:
        low, high = (float(v) for v in args.think_ms.split("-"))
    except ValueError:
        parser.error("--think-ms takes MIN-MAX in milliseconds, e.g. 500-1500")
    if not 0 <= low <= high:
        parser.error("--think-ms: need 0 <= MIN <= MAX")
    from referee.telemetry import logs as referee_logging

    referee_logging.configure("console", "WARNING")
    scripts = _scripts(20, args.seed)
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


if __name__ == "__main__":
    sys.exit(main())
