"""Lessons end to end, with the product's own commands: a weak reference level plays a strong
one, the weak level's lessons are made from the records, and both levels are put to them.

    python bench/lessons.py [--json] [--games N] [--weak level1] [--strong level3]
                            [--seed S] [--nodes N] [--keep DIR]

Each step is a ``python -m client_sdk`` command run as a student would run it (printed before
it runs), in a scratch folder (``--keep``: this one, with the records and the lessons file):

1. ``play WEAK STRONG --games N --openings tetress --seed S --record games.pgn --json``;
2. ``lessons games.pgn --bot WEAK --nodes N -o lessons.jsonl --json``;
3. ``test lessons.jsonl WEAK --json``, then the same for STRONG.

Prints (``--json``: one JSON object as the last line) the games and WEAK's results, the
lessons made and the seconds that took a game, each level's solved / total (and by kind of
mistake and result), the strong level's solved count over the weak level's on the same
positions in the same run (``strong_vs_weak_solved``: the weak level is the baseline), and
``test``'s wall seconds per position (the whole command's wall time over its positions: a
fresh bot process each, brought to the position and asked for one move).

The machine is shared (two cores): run it under ``flock /tmp/bench.lock``; timings are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import finish  # noqa: E402


def _run(folder: Path, *args: str) -> tuple[dict[str, Any], float]:
    """``python -m client_sdk ARGS`` in ``folder``: its last line's JSON and its wall seconds.
    ``test`` exits 1 when a position is not solved; anything else but 0 is a failure."""
    shown = " ".join(shlex.quote(a) for a in ("python", "-m", "client_sdk", *args))
    print(f"$ {shown}", file=sys.stderr, flush=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "client_sdk", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    allowed = (0, 1) if args[0] == "test" else (0,)
    if done.returncode not in allowed or not done.stdout.strip():
        raise SystemExit(f"{shown} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1]), wall


def _tested(summary: dict[str, Any], wall: float) -> dict[str, Any]:
    total = summary["total"]
    return {
        "solved": summary["solved"],
        "total": total,
        "by_kind": summary["by_kind"],
        "results": summary["results"],
        "wall_s": round(wall, 2),
        "wall_s_per_position": round(wall / total, 3) if total else 0.0,
        "own_s_per_position": summary["seconds_per_position"],
    }


def measure(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The three steps in ``folder``; the figures."""
    play, play_wall = _run(
        folder, "play", args.weak, args.strong, "--games", str(args.games),
        "--openings", "tetress", "--seed", str(args.seed), "--record", "games.pgn", "--json",
    )  # fmt: skip
    made, made_wall = _run(
        folder, "lessons", "games.pgn", "--bot", args.weak, "--nodes", str(args.nodes),
        "-o", "lessons.jsonl", "--json",
    )  # fmt: skip
    weak = _tested(*_run(folder, "test", "lessons.jsonl", args.weak, "--json"))
    strong = _tested(*_run(folder, "test", "lessons.jsonl", args.strong, "--json"))
    games = play["games"]
    return {
        "weak": args.weak,
        "strong": args.strong,
        "games": len(games),
        "weak_won": play["won"],
        "weak_drawn": play["drawn"],
        "weak_lost": play["lost"],
        "plies": sum(g["plies"] for g in games),
        "play_s": round(play_wall, 1),
        "lessons": made["lessons"],
        "nodes": args.nodes,
        "lessons_s": round(made_wall, 1),
        "lessons_s_per_game": round(made_wall / len(games), 2),
        "weak_solved": weak["solved"],
        "strong_solved": strong["solved"],
        "total": weak["total"],
        "strong_vs_weak_solved": (
            round(strong["solved"] / weak["solved"], 2) if weak["solved"] else None
        ),
        "test_wall_s_per_position": round(
            (weak["wall_s"] + strong["wall_s"]) / (weak["total"] + strong["total"]), 3
        )
        if weak["total"]
        else 0.0,
        "weak_test": weak,
        "strong_test": strong,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="end with one JSON object")
    parser.add_argument("--games", type=int, default=6, help="games played (colours alternate)")
    parser.add_argument("--weak", default="level1", help="the bot whose lessons are made")
    parser.add_argument("--strong", default="level3", help="its opponent, put to them too")
    parser.add_argument("--seed", type=int, default=1, help="play's --seed (openings, bots)")
    parser.add_argument("--nodes", type=int, default=2000, help="lessons' --nodes")
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep its files")
    args = parser.parse_args()
    if args.keep:
        folder = Path(args.keep)
        folder.mkdir(parents=True, exist_ok=True)
        figures = measure(folder, args)
    else:
        with tempfile.TemporaryDirectory(prefix="bench-lessons-") as scratch:
            figures = measure(Path(scratch), args)
    weak, strong = figures["weak_test"], figures["strong_test"]
    print(f"lessons of {figures['weak']} from {figures['games']} games against {figures['strong']}")
    print(
        f"  games: {figures['weak']} won {figures['weak_won']}, drew {figures['weak_drawn']}, "
        f"lost {figures['weak_lost']} ({figures['plies']} plies, {figures['play_s']:.0f} s)"
    )
    print(
        f"  lessons: {figures['lessons']} at {figures['nodes']} nodes a position "
        f"({figures['lessons_s_per_game']:.1f} s a game)"
    )
    for name, tested in ((figures["weak"], weak), (figures["strong"], strong)):
        print(
            f"  test {name}: solved {tested['solved']}/{tested['total']}, "
            f"{tested['wall_s_per_position']:.2f} s a position (wall), results {tested['results']}"
        )
    ratio = figures["strong_vs_weak_solved"]
    print(f"  {figures['strong']} solves x{ratio} the positions {figures['weak']} does (same run)")
    return finish(figures, args.json)


if __name__ == "__main__":
    sys.exit(main())
