"""Failure packs: how big a pack is and how long ``reproduce`` takes for a long game.

    .venv/bin/python bench/packs.py [--runs N] [--json]

Plays ``referee match`` (sandboxed) of ATT on a 60-row well for 60 placer turns (up to 120
plies) between a bot that plays seeded random moves and crashes at its 50th move (ply 98 or
99) and ``greedy_bot``, with ``--record``, so its failure pack is written; then replays the
pack with ``python -m client_sdk reproduce``. The baseline, timed in the same run, is the
match itself (the same moves played under the referee): the ratio is what reproducing costs
against playing the game on the server. Figures: the pack's size (and the largest of the
runs), the plies, the reproduce wall time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

LATE_BOT = """
import random
import sys

from client_sdk import Agent


class Late(Agent):
    def __init__(self):
        self.moves = 0

    def choose_move(self, state, clocks):
        self.moves += 1
        print(f"move {self.moves}: thinking about {len(list(state.legal_moves))} moves",
              file=sys.stderr)
        if self.moves >= 50:
            raise RuntimeError("crashed at move 50")
        return random.choice(sorted(state.legal_moves, key=str))
"""


def _timed(argv: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    began = time.perf_counter()
    out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=900)
    return time.perf_counter() - began, out


def one_run(tmp: Path) -> dict[str, float] | None:
    bot = tmp / "late.py"
    bot.write_text(LATE_BOT)
    record = tmp / "game.json"
    match_s, out = _timed(
        [sys.executable, "-m", "referee.commands.main", "match", f"{bot}:Late",
         "client_sdk.examples.greedy_bot", "--game", "att", "--param", "height=60",
         "--param", "max_rows=60", "--param", "max_placer_turns=60",
         "--record", str(record), "--json"]
    )  # fmt: skip
    result = json.loads(out.stdout.strip().splitlines()[-1])
    pack = next(iter(result["seats"].values())).get("failure_pack")
    if pack is None:  # the game ended by the rules before move 50: not a long game
        return None
    reproduce_s, out = _timed(
        [sys.executable, "-m", "client_sdk", "reproduce", pack, f"{bot}:Late", "--json"]
    )
    replay = json.loads(out.stdout.strip().splitlines()[-1])
    assert replay["match"], replay
    return {
        "plies": float(result["plies"]),
        "pack_bytes": float(Path(pack).stat().st_size),
        "match_s": match_s,
        "reproduce_s": reproduce_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    runs = []
    attempts = 0
    while len(runs) < args.runs and attempts < args.runs * 4:
        attempts += 1
        with tempfile.TemporaryDirectory() as tmp:
            run = one_run(Path(tmp))
        if run is not None:
            runs.append(run)
            print(
                f"plies {run['plies']:.0f}  pack {run['pack_bytes'] / 1024:.1f} KB  "
                f"match {run['match_s']:.2f} s  reproduce {run['reproduce_s']:.2f} s"
            )
    if not runs:
        sys.exit("no game lasted 50 moves")
    summary = {
        "runs": len(runs),
        "plies": statistics.median(r["plies"] for r in runs),
        "pack_typical_bytes": statistics.median(r["pack_bytes"] for r in runs),
        "pack_max_bytes": max(r["pack_bytes"] for r in runs),
        "reproduce_s": statistics.median(r["reproduce_s"] for r in runs),
        "baseline_match_s": statistics.median(r["match_s"] for r in runs),
    }
    summary["ratio"] = summary["reproduce_s"] / summary["baseline_match_s"]
    kb = 1024
    print(
        f"median of {len(runs)}: {summary['plies']:.0f} plies, pack "
        f"{summary['pack_typical_bytes'] / kb:.1f} KB (max {summary['pack_max_bytes'] / kb:.1f} "
        f"KB), reproduce {summary['reproduce_s']:.2f} s vs the match "
        f"{summary['baseline_match_s']:.2f} s (ratio {summary['ratio']:.2f})"
    )
    if args.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
