"""Benchmark: pairing Swiss rounds of a 500-player event (networkx matching inside).

Measures, in one run on the same simulated event (seeded random results):
- every round of an N-player Swiss event (``referee.tournament.pairing.swiss_round``), mean
  and slowest;
- the same rounds with an odd player count (N + 1), where choosing the bye costs extra checks;
- the slowest path: the matching-guided search alone (``search_budget=0``), one round late in
  the event;
- the baseline: ONE exact maximum matching (``networkx.max_weight_matching``) of the round-1
  graph, the cost of an exact answer with no shortcut. The ratio is slowest round / baseline.

Times are CPU seconds of this process (pairing is single-threaded), so other load on a shared
machine does not inflate them.

Usage: python bench/pairing.py [--players 500] [--rounds 11] [--seed 1] [--json]
With ``--json`` the last line is one JSON object: ``players``, ``rounds``, ``round_mean_s``,
``round_max_s``, ``odd_round_max_s``, ``guided_round_s``, ``matching_s``,
``round_max_to_matching``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

from referee.tournament.pairing import Round, _max_matching, swiss_round  # noqa: E402


def simulate(players: list[str], rounds: int, seed: int) -> tuple[list[float], list[Round]]:
    """Pair ``rounds`` Swiss rounds with random results; returns each round's seconds."""
    rng = random.Random(seed)
    scores = dict.fromkeys(players, 0.0)
    history: list[Round] = []
    times: list[float] = []
    for _ in range(rounds):
        start = time.process_time()
        rnd = swiss_round(players, scores, history)
        times.append(time.process_time() - start)
        history.append(rnd)
        for pr in rnd.pairings:
            s = rng.choice([0.0, 1.0, 1.0, 2.0])
            scores[pr.first] += s
            scores[pr.second] += 2.0 - s
        for b in rnd.byes:
            scores[b] += 2.0
    return times, history


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--players", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    players = [f"p{i:04d}" for i in range(args.players)]

    start = time.process_time()
    _max_matching(players, {p: set() for p in players})
    matching_s = time.process_time() - start

    times, history = simulate(players, args.rounds, args.seed)
    odd_times, _ = simulate([*players, "extra"], args.rounds, args.seed)
    scores = dict.fromkeys(players, 0.0)  # the guided search's cost hardly depends on scores
    start = time.process_time()
    swiss_round(players, scores, history[:-1], search_budget=0)
    guided_s = time.process_time() - start

    result = {
        "players": args.players,
        "rounds": args.rounds,
        "round_mean_s": round(sum(times) / len(times), 4),
        "round_max_s": round(max(times), 4),
        "odd_round_max_s": round(max(odd_times), 4),
        "guided_round_s": round(guided_s, 4),
        "matching_s": round(matching_s, 4),
        "round_max_to_matching": round(max(times) / matching_s, 4),
    }
    if not args.json:
        n = args.players
        print(f"Swiss, {n} players, {args.rounds} rounds (CPU seconds)")
        print(f"  round mean {result['round_mean_s']:.3f} s, slowest {result['round_max_s']:.3f} s")
        print(f"  {n + 1} players (a bye each round): slowest {result['odd_round_max_s']:.3f} s")
        print(f"  matching-guided search alone, round {args.rounds}: {guided_s:.3f} s")
        print(f"  baseline, one exact networkx matching of round 1: {matching_s:.3f} s")
        print(f"  slowest round / baseline: {result['round_max_to_matching']:.3f}")
        return 0
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
