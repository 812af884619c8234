"""Benchmark: a 10-bot round robin of random bots, end to end (games per second).

Everything a real tournament does: register the bots, create the tournament in a fresh SQLite
file, and run it with :class:`referee.tournament.runner.TournamentRunner`: fresh bot
processes for every game (``python -m client_sdk``), a private gRPC server per game, the
referee's clocks, a record per game written with its result in one transaction, the live
ladder, and the rating tables at the end. Full-length Tetress games (turn limit 150) by default.

Usage: python bench/tournament.py [--bots 10] [--cycles 1] [--concurrency N] [--turn-limit 150]
                                  [--db FILE] [--json]
       python bench/tournament.py --quick [--runs N] [--json]

``--quick`` times the main job instead, ``referee tournament quick`` in a fresh folder, as a
command (``--runs`` times). Both report the CPU floor: ``cpu_s`` is all the CPU the run used,
the bots' included (a ``cpuacct`` cgroup of its own holds the run, and every bot's cgroup is
made inside it; where none can be made, the closing line's own count for ``--quick``, else
this process's and its children's), ``cores`` the machine's, and ``floor_ratio`` the wall
time over ``cpu_s / cores`` (1.0: every core busy all the time).

With ``--json`` the last line is one JSON object: ``games_per_s``, ``games``, ``bots``,
``wall_s``, ``cpu_s``, ``cores``, ``floor_ratio``, ``plies_per_s``, ``concurrency``, ...
(``--quick``: ``wall_s``, ``cpu_s``, ``cores``, ``floor_ratio``, each run's, and the
medians).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# Run as a script, sys.path[0] is bench/, where bench/referee.py would shadow the package.
ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

from referee.play.bots import register_source  # noqa: E402
from referee.storage import (  # noqa: E402
    Repository,
    TournamentFormat,
    TournamentSettings,
)
from referee.tournament.runner import TournamentRunner  # noqa: E402


@contextlib.contextmanager
def _cpu_counted() -> Iterator[Callable[[], tuple[float, str]]]:
    """While the block runs, this process (and what it starts) in a ``cpuacct`` cgroup of its
    own, so that the bots' cgroups, made inside the launcher's, are counted too; yields a
    function returning the CPU seconds used since the block began, and how they were counted."""
    from referee.sandbox.cpu import detect_cpuacct_parent, read_cgroup_cpu

    parent = detect_cpuacct_parent()
    group: Path | None = None
    if parent is not None:
        group = parent.path / f"tetromino-bench-{os.getpid()}"
        try:
            group.mkdir()
            (group / "cgroup.procs").write_text(str(os.getpid()))
        except OSError:
            with contextlib.suppress(OSError):
                group.rmdir()
            group = None
    start = _rusage_s()
    try:
        if group is not None:
            yield lambda: (read_cgroup_cpu(group, 1) or 0.0, "cgroup")
        else:
            yield lambda: (_rusage_s() - start, "rusage")
    finally:
        if group is not None and parent is not None:
            (parent.path / "cgroup.procs").write_text(str(os.getpid()))
            for _ in range(100):  # the kernel empties it a moment after its last task left
                with contextlib.suppress(OSError):
                    group.rmdir()
                    break
                time.sleep(0.05)


def _rusage_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _floor(wall: float, cpu: float) -> dict[str, Any]:
    cores = os.cpu_count() or 1
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "cores": cores,
        "floor_ratio": round(wall / (cpu / cores), 3) if cpu > 0 else 0.0,
    }


#: The CPU the closing line of ``referee tournament quick`` states it used.
_CLOSING_CPU = re.compile(r"([0-9.]+) s of CPU")


def _quick_once() -> dict[str, Any]:
    """One ``referee tournament quick`` in a fresh folder: its wall time and all its CPU."""
    referee = Path(sys.executable).with_name("referee")
    command = [str(referee)] if referee.exists() else [sys.executable, "-m", "referee"]
    with tempfile.TemporaryDirectory() as tmp, _cpu_counted() as used:
        start = time.perf_counter()
        out = subprocess.run(
            [*command, "tournament", "quick", "--no-progress"],
            cwd=tmp,
            capture_output=True,
            text=True,
            check=True,
        )
        wall = time.perf_counter() - start
        cpu, method = used()
    stated = _CLOSING_CPU.findall(out.stdout)
    if method != "cgroup" and stated:
        cpu, method = float(stated[-1]), "closing line"
    return {
        **_floor(wall, cpu),
        "cpu_method": method,
        "stated_cpu_s": float(stated[-1]) if stated else 0.0,
    }


def _quick(args: argparse.Namespace) -> int:
    runs = [_quick_once() for _ in range(args.runs)]
    result: dict[str, Any] = {
        key: round(statistics.median(float(r[key]) for r in runs), 3)
        for key in ("wall_s", "cpu_s", "floor_ratio", "stated_cpu_s")
    }
    result["cores"] = os.cpu_count() or 1
    result["floor_ratio_min"] = min(float(r["floor_ratio"]) for r in runs)
    result["cpu_method"] = runs[0]["cpu_method"]
    result["runs"] = runs
    if not args.json:
        for i, r in enumerate(runs, 1):
            print(
                f"run {i}: {r['wall_s']:.2f} s wall, {r['cpu_s']:.2f} s CPU ({r['cpu_method']}; "
                f"the closing line says {r['stated_cpu_s']:.2f} s) on {r['cores']} cores: "
                f"x{r['floor_ratio']:.3f} of the floor"
            )
    print(json.dumps(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.quick:
        return _quick(args)
    from referee.telemetry import logs as referee_logging

    referee_logging.configure("console", "WARNING")

    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or str(Path(tmp) / "bench.db")
        repo = Repository.open(db)
        tournament_id = _round_robin(repo, args)
        with _cpu_counted() as used:
            start = time.perf_counter()
            summary = asyncio.run(TournamentRunner(repo, tournament_id).run())
            wall = time.perf_counter() - start
            cpu, method = used()
        games = repo.list_games(tournament_id=tournament_id, limit=None)
        plies = sum(g.plies for g in games)
        verdicts: dict[str, int] = {}
        for g in games:
            verdicts[str(g.verdict)] = verdicts.get(str(g.verdict), 0) + 1
        repo.close()
    result = {
        "games": len(games),
        "bots": args.bots,
        "cycles": args.cycles,
        "concurrency": args.concurrency,
        "cores": os.cpu_count(),
        "turn_limit": args.turn_limit,
        **_floor(wall, cpu),
        "cpu_method": method,
        "games_per_s": round(len(games) / wall, 3),
        "plies_per_s": round(plies / wall, 1),
        "mean_plies": round(plies / max(1, len(games)), 1),
        "complete": summary.complete,
        "verdicts": verdicts,
    }
    if not args.json:
        print(
            f"{result['games']} games between {args.bots} random bots in {wall:.1f} s: "
            f"{result['games_per_s']} games/s, {result['plies_per_s']} plies/s "
            f"(concurrency {args.concurrency}, {os.cpu_count()} cores); {cpu:.1f} s of CPU "
            f"({method}): x{result['floor_ratio']} of the floor"
        )
    print(json.dumps(result))
    return 0 if summary.complete else 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=10)
    parser.add_argument("--cycles", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--turn-limit", type=int, default=150)
    parser.add_argument("--db", help="SQLite file (default: a temporary one)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="time `referee tournament quick`")
    parser.add_argument("--runs", type=int, default=1, help="with --quick: how many runs")
    return parser


def _round_robin(repo: Repository, args: argparse.Namespace) -> int:
    """Register ``args.bots`` random bots and create their round robin; returns its id."""
    versions = [
        register_source(repo, "client_sdk.examples.random_bot", name=f"random{i:02d}")
        for i in range(args.bots)
    ]
    tournament = repo.create_tournament(
        TournamentSettings(
            name=f"bench-{time.time():.0f}",
            format=TournamentFormat.ROUND_ROBIN,
            game="tetress",
            game_params={"turn_limit": args.turn_limit},
            time_control={"per_game": 180.0, "grace": 0.25},
            cycles=args.cycles,
            concurrency=args.concurrency,
        ),
        [v.id for v in versions],
    )
    return tournament.id


if __name__ == "__main__":
    sys.exit(main())
