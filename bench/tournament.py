"""Benchmark: a 10-bot round robin of random bots, end to end (games per second).

Everything a real tournament does: register the bots, create the tournament in a fresh SQLite
file, and run it with :class:`referee.tournament.runner.TournamentRunner`: fresh bot
processes for every game (``python -m client_sdk``), a private gRPC server per game, the
referee's clocks, a record per game written with its result in one transaction, the live
ladder, and the rating tables at the end. Full-length Tetress games (turn limit 150) by default.

Usage: python bench/tournament.py [--bots 10] [--cycles 1] [--concurrency N] [--turn-limit 150]
                                  [--db FILE] [--json]
With ``--json`` the last line is one JSON object: ``games_per_s``, ``games``, ``bots``,
``wall_s``, ``plies_per_s``, ``concurrency``, ...
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

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


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from referee.telemetry import logs as referee_logging

    referee_logging.configure("console", "WARNING")

    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or str(Path(tmp) / "bench.db")
        repo = Repository.open(db)
        tournament_id = _round_robin(repo, args)
        start = time.perf_counter()
        summary = asyncio.run(TournamentRunner(repo, tournament_id).run())
        wall = time.perf_counter() - start
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
        "wall_s": round(wall, 3),
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
            f"(concurrency {args.concurrency}, {os.cpu_count()} cores)"
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
