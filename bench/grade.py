"""Benchmark of ``referee grade``: a small class graded for real, and the class of 30 it
predicts on this machine.

A class of ``--bots`` students (copies of the example and test bots, each registered as a
bot of its own) is graded with the command's defaults (SPRT per level, the openings book,
``--concurrency`` students at once, games in the sandbox) into a fresh SQLite file. The
baseline measured in the same run is one game of the random example against reference
Level1, the cheapest grading game. The prediction for 30 students scales the measured wall
time by 30 / ``--bots`` (the class's mix of strong and weak bots stays the same), and
``reuse_s`` is a second grading of the same class, which reuses every stored game.

Usage: python bench/grade.py [--bots 4] [--concurrency 2] [--json]
With ``--json`` the last line is one JSON object: ``bots``, ``games``, ``wall_s``,
``per_game_s``, ``baseline_game_s``, ``ratio_per_game_to_baseline``,
``predicted_30_bots_s``, ``reuse_s``, ``load``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import finish  # noqa: E402

STUDENTS = [
    "client_sdk/examples/course_random",
    "client_sdk/examples/course_greedy",
    "tests/term/bots/hugger",
    "tests/term/bots/lineclear",
    "client_sdk/examples/random_bot.py",
    "client_sdk/examples/greedy_bot.py",
]


def _referee(db: Path | None, *argv: str) -> subprocess.CompletedProcess[str]:
    tail = ["--db", str(db)] if db is not None else []
    return subprocess.run(
        [sys.executable, "-m", "referee.commands.main", *argv, *tail],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )


def _students(db: Path, work: Path, count: int) -> list[str]:
    """Register ``count`` student bots (copies of the test bots, in turn) and name them."""
    names = []
    for i in range(count):
        source = ROOT / STUDENTS[i % len(STUDENTS)]
        copy = work / f"s{i}" / source.name
        copy.parent.mkdir()
        (shutil.copytree if source.is_dir() else shutil.copy)(source, copy)
        name = f"student{i}"
        added = _referee(db, "bot", "add", name, str(copy), "--owner", "bench")
        assert added.returncode == 0, added.stderr
        names.append(name)
    return names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--bots", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="grade-bench-"))
    try:
        db = work / "arena.db"
        _referee(db, "player", "add", "bench", "--create")
        start = time.perf_counter()
        base = _referee(
            None,
            "match",
            "client_sdk.examples.random_bot",
            "client_sdk.examples.reference_bot:Level1",
        )
        baseline = time.perf_counter() - start
        if base.returncode not in (0, 1):
            print(base.stderr, file=sys.stderr)
            return 1
        names = _students(db, work, args.bots)
        start = time.perf_counter()
        graded = _referee(db, "grade", *names, "--concurrency", str(args.concurrency), "--json")
        wall = time.perf_counter() - start
        if graded.returncode != 0:
            print(graded.stderr, file=sys.stderr)
            return 1
        report = json.loads(graded.stdout.strip().splitlines()[-1])
        start = time.perf_counter()
        _referee(db, "grade", *names, "--report-only", "--json")
        reuse = time.perf_counter() - start
    finally:
        shutil.rmtree(work, ignore_errors=True)
    games = report["played"]
    per_game = wall / games if games else 0.0
    result = {
        "bots": args.bots,
        "games": games,
        "wall_s": round(wall, 1),
        "per_game_s": round(per_game, 2),
        "baseline_game_s": round(baseline, 2),
        "ratio_per_game_to_baseline": round(per_game / baseline, 2) if baseline else None,
        "predicted_30_bots_s": round(wall * 30 / args.bots, 0),
        "reuse_s": round(reuse, 1),
        "load": os.getloadavg()[0],
        "grades": {s["bot"]: s["grade"] for s in report["students"]},
    }
    print(
        f"{args.bots} bots graded in {wall:.0f} s ({games} games, {per_game:.1f} s a game, "
        f"{args.concurrency} at once); one baseline game {baseline:.1f} s; "
        f"30 bots predicted {result['predicted_30_bots_s']:.0f} s; reuse {reuse:.1f} s"
    )
    return finish(result, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
