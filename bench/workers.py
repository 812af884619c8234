"""Benchmark: tournament games on the PostgreSQL job queue, played by ``referee worker``s.

Measured in one run, on a throwaway database of the local PostgreSQL (dropped at the end):

* ``baseline_games_per_s``: the same round robin played in-process (one machine, SQLite,
  the runner's own concurrency ``--concurrency``), the single-machine mode;
* ``dispatch_overhead_ms``: from enqueueing a game to the game starting on an idle worker
  (median of ``--probes`` games enqueued one at a time);
* ``games_per_s_1_worker`` and ``games_per_s_2_workers``: a round robin of ``--bots`` random
  bots through the queue with one worker, then two (each playing ``--concurrency`` games at
  once), runner start to tournament finished;
* ``recovery_s``: from SIGKILL of the worker playing a game to that game starting again on the
  other worker (about the stall timeout plus one heartbeat and one queue poll).

Usage: python bench/workers.py [--bots 6] [--turn-limit 20] [--concurrency 1] [--json]
With ``--json`` the last line is one JSON object with those keys, the ratios and settings.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from bench.common import finish  # noqa: E402
from referee.play.bots import register_source  # noqa: E402
from referee.storage import (  # noqa: E402
    Repository,
    TournamentFormat,
    TournamentInfo,
    TournamentSettings,
)
from referee.tournament.runner import TournamentRunner  # noqa: E402
from referee.workers.dispatch import QueueDispatcher  # noqa: E402

ADMIN = os.environ.get(
    "ARENA_TEST_PG_ADMIN_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
BOT = "client_sdk.examples.random_bot"
HEARTBEAT_S = 0.5
STALL_S = 3.0


def tournament(repo: Repository, name: str, bots: int, turn_limit: int, per: int = 1) -> Any:
    versions = [register_source(repo, BOT, name=f"random{i:02d}") for i in range(bots)]
    return repo.create_tournament(
        TournamentSettings(
            name=name,
            format=TournamentFormat.ROUND_ROBIN,
            game="tetress",
            game_params={"turn_limit": turn_limit},
            time_control={"per_game": 60.0, "grace": 1.0},
            games_per_pairing=per,
        ),
        [v.id for v in versions],
    )


def worker(url: str, log: Path, concurrency: int) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "referee.commands.main", "worker", "--db", url]
    argv += ["--concurrency", str(concurrency), "--heartbeat", str(HEARTBEAT_S)]
    argv += ["--stall-timeout", str(STALL_S), "--log-format", "json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with log.open("wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)


def log_events(log: Path, event: str) -> list[dict[str, Any]]:
    found = []
    for raw in log.read_text(errors="replace").splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and line.get("event") == event:
            found.append(line)
    return found


async def run_queued(repo: Repository, url: str, t: TournamentInfo) -> float:
    """Seconds from the runner's start to the tournament finished, through the queue."""
    start = time.perf_counter()
    async with QueueDispatcher(repo, url) as queue:
        summary = await TournamentRunner(repo, t.id, queue=queue, ladder=None).run()
    assert summary.complete, summary
    return time.perf_counter() - start


async def dispatch_overhead(repo: Repository, url: str, probes: int, turn_limit: int) -> float:
    """Median ms from enqueue to the game's start on an idle worker."""
    t = tournament(repo, "probe", 2, turn_limit, per=probes)
    a, b = (v.id for v in repo.tournament_entrants(t.id))
    (pairing,) = repo.add_pairings(t.id, 1, [(a, b)], games_per_pairing=probes)
    delays = []
    async with QueueDispatcher(repo, url) as queue:
        for index in range(probes):
            await asyncio.sleep(0.5)  # the worker is idle, waiting on LISTEN
            sent = datetime.now(UTC)
            await queue.enqueue(t.id, pairing.id, index)
            game = None
            while game is None:
                await asyncio.sleep(0.05)
                game = await queue.stored(pairing.id, index)
            delays.append((game.started_at - sent).total_seconds() * 1000)
    return statistics.median(delays)


async def recovery(repo: Repository, url: str, procs: list[Any], logs: list[Path]) -> float:
    """Seconds from SIGKILL of the worker playing a long game to its start on the other."""
    t = tournament(repo, "recovery", 2, 150)
    a, b = (v.id for v in repo.tournament_entrants(t.id))
    (pairing,) = repo.add_pairings(t.id, 1, [(a, b)], games_per_pairing=1)
    async with QueueDispatcher(repo, url) as queue:
        job = await queue.enqueue(t.id, pairing.id, 0)
        while True:
            playing = [
                i
                for i, log in enumerate(logs)
                if any(e.get("job_id") == str(job) for e in log_events(log, "game_started"))
            ]
            if playing:
                break
            await asyncio.sleep(0.02)
        victim = playing[0]
        procs[victim].send_signal(signal.SIGKILL)
        killed = datetime.now(UTC)
        other = logs[1 - victim]
        while True:
            again = [e for e in log_events(other, "game_started") if e.get("job_id") == str(job)]
            if again:
                restarted = datetime.fromisoformat(again[0]["timestamp"].replace("Z", "+00:00"))
                await queue.wait(job)
                return (restarted - killed).total_seconds()
            await asyncio.sleep(0.05)


def baseline(bots: int, turn_limit: int, concurrency: int) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Repository.open(str(Path(tmp) / "bench.db"))
        t = tournament(repo, "baseline", bots, turn_limit)
        start = time.perf_counter()
        summary = asyncio.run(
            TournamentRunner(repo, t.id, concurrency=concurrency, ladder=None).run()
        )
        assert summary.complete, summary
        wall = time.perf_counter() - start
        games = repo.count_games(tournament_id=t.id)
        repo.close()
    return games, wall


def measure(url: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    logs = [tmp / "w1.log", tmp / "w2.log"]
    procs = [worker(url, logs[0], args.concurrency)]
    repo = Repository.open(url)
    try:
        while not log_events(logs[0], "worker_started"):
            time.sleep(0.1)
        overhead = asyncio.run(dispatch_overhead(repo, url, args.probes, args.turn_limit))
        t1 = tournament(repo, "one-worker", args.bots, args.turn_limit)
        wall1 = asyncio.run(run_queued(repo, url, t1))
        games = repo.count_games(tournament_id=t1.id)
        procs.append(worker(url, logs[1], args.concurrency))
        while not log_events(logs[1], "worker_started"):
            time.sleep(0.1)
        t2 = tournament(repo, "two-workers", args.bots, args.turn_limit)
        wall2 = asyncio.run(run_queued(repo, url, t2))
        rec = asyncio.run(recovery(repo, url, procs, logs))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(60)
        repo.close()
    return {
        "games": games,
        "dispatch_overhead_ms": round(overhead, 1),
        "games_per_s_1_worker": round(games / wall1, 3),
        "games_per_s_2_workers": round(games / wall2, 3),
        "recovery_s": round(rec, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=6)
    parser.add_argument("--turn-limit", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=1, help="games at once per worker")
    parser.add_argument("--probes", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from referee.telemetry import logs as referee_logging

    referee_logging.configure("console", "WARNING")
    games, wall0 = baseline(args.bots, args.turn_limit, args.concurrency)
    name = f"arena_bench_{secrets.token_hex(4)}"
    admin = make_url(ADMIN).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        url = make_url(ADMIN).set(database=name).render_as_string(hide_password=False)
        with tempfile.TemporaryDirectory() as tmp:
            out = measure(url, args, Path(tmp))
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    out["baseline_games_per_s"] = round(games / wall0, 3)
    out["ratio_1_worker_vs_in_process"] = round(out["games_per_s_1_worker"] / (games / wall0), 2)
    out["ratio_2_workers_vs_1"] = round(
        out["games_per_s_2_workers"] / out["games_per_s_1_worker"], 2
    )
    out.update(
        bots=args.bots,
        turn_limit=args.turn_limit,
        concurrency_per_worker=args.concurrency,
        heartbeat_s=HEARTBEAT_S,
        stall_timeout_s=STALL_S,
        cores=os.cpu_count(),
        load_1min=round(os.getloadavg()[0], 1),
    )
    print(f"in-process (one machine, SQLite): {out['baseline_games_per_s']} games/s")
    print(f"dispatch overhead, enqueue to game start (median): {out['dispatch_overhead_ms']} ms")
    print(
        f"1 worker: {out['games_per_s_1_worker']} games/s "
        f"(x{out['ratio_1_worker_vs_in_process']} of in-process)"
    )
    print(f"2 workers: {out['games_per_s_2_workers']} games/s (x{out['ratio_2_workers_vs_1']})")
    print(f"recovery, SIGKILL to restart elsewhere: {out['recovery_s']} s (stall {STALL_S} s)")
    return finish(out, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
