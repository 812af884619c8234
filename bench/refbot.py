"""Benchmark and calibration of the reference search bots.

Measures the search's speed (``nodes_per_s``, on a fixed set of mid-game positions; the
baseline in the same run is the greedy example's one-ply scan of the same positions, in
positions evaluated per second) and each level's score against the greedy example, in game
pairs from the shipped openings book (in-process games: the search is measured, not gRPC).

With ``--calibrate`` it also plays the levels against the random example and each other and
fits maximum-likelihood Elo with the random example pinned at ``RANDOM_ELO``; with
``--write`` that table becomes ``referee/analysis/anchors.json`` (the anchors a leaderboard
pins). Games are bounded: ``--pairs`` per meeting.

Usage: python bench/refbot.py [--game tetress] [--pairs 3] [--calibrate [--write]] [--json]
With ``--json`` the last line is one JSON object: ``nodes_per_s``, ``baseline_evals_per_s``,
``score_vs_greedy`` (per level, 0..1), ``elo`` (with --calibrate).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

from bench.common import finish  # noqa: E402
from client_sdk.examples.greedy_bot import GreedyBot, evaluate  # noqa: E402
from client_sdk.examples.random_bot import RandomBot  # noqa: E402
from client_sdk.examples.reference_bot import Level1, Level2, Level3  # noqa: E402
from client_sdk.reference import LEVELS, searcher_for  # noqa: E402
from engine.records.openings import Book, default_book_path, load_book  # noqa: E402
from referee.analysis.anchors import RANDOM_ELO, calibrate, write_anchors  # noqa: E402
from referee.analysis.local_pairs import LocalGame, play_pairs  # noqa: E402

LEVEL_CLASSES = {1: Level1, 2: Level2, 3: Level3}


def speed(game_name: str, positions: int = 12) -> tuple[float, float]:
    """(search nodes/s at level 2's budget, greedy one-ply evaluations/s) on the same positions."""
    from engine.registry import load_game

    game = load_game(game_name)
    rng = random.Random(7)
    states = []
    while len(states) < positions:
        state = game.new_state()
        for _ in range(rng.randrange(6, 24)):
            if state.is_over():
                break
            state.apply(rng.choice(list(state.legal_moves)))
        if not state.is_over():
            states.append(state)
    search = searcher_for(game_name, 1)
    nodes, start = 0, time.perf_counter()
    for state in states:
        nodes += search.search(state.copy(), max_nodes=LEVELS[game_name][2]).nodes
    nodes_per_s = nodes / (time.perf_counter() - start)
    evals, start = 0, time.perf_counter()
    for state in states:
        me = state.to_move
        for move in list(state.legal_moves):
            state.apply(move)
            evaluate(state, me)
            state.undo()
            evals += 1
    return nodes_per_s, evals / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    levels = [int(x) for x in args.levels.split(",")]
    book = load_book(default_book_path(args.game))
    nodes_per_s, evals_per_s = speed(args.game)
    print(
        f"{args.game}: search {nodes_per_s:,.0f} nodes/s; greedy scan {evals_per_s:,.0f} "
        f"evaluations/s (ratio {nodes_per_s / evals_per_s:.2f}; noisy: shared cores)"
    )
    scores, results = _versus_greedy(levels, book, args.pairs, args.game)
    out: dict[str, object] = {
        "game": args.game,
        "nodes_per_s": round(nodes_per_s),
        "baseline_evals_per_s": round(evals_per_s),
        "score_vs_greedy": scores,
    }
    if args.calibrate:
        results += _calibration_games(levels, book, args.pairs, args.game)
        table = calibrate(results)
        for name, elo in table.items():
            print(f"  {name:>14}  {elo:7.0f}  (random pinned at {RANDOM_ELO:g})")
        out["elo"] = table
        if args.write:
            write_anchors(args.game, table, len(results), " ".join(sys.argv))
    return finish(out, args.json)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="tetress", choices=("tetress", "att"))
    parser.add_argument("--pairs", type=int, default=3, help="game pairs per meeting")
    parser.add_argument("--levels", default="1,2,3")
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument("--write", action="store_true", help="with --calibrate: store the table")
    parser.add_argument("--json", action="store_true")
    return parser


def _versus_greedy(
    levels: list[int], book: Book, pairs: int, game: str
) -> tuple[dict[str, float], list[LocalGame]]:
    """Each level against the greedy example: its score by level (printed as it comes), and
    the games."""
    scores = {}
    results = []
    for level in levels:
        games = play_pairs(
            LEVEL_CLASSES[level], GreedyBot, book, pairs, game, f"reference-L{level}", "greedy"
        )
        results += games
        score = sum(g.score for g in games) / len(games)
        scores[f"L{level}"] = round(score, 3)
        print(
            f"level {level} ({LEVELS[game][level]} nodes) vs greedy: "
            f"{score:.0%} of {len(games)} games",
            flush=True,
        )
    return scores, results


def _calibration_games(levels: list[int], book: Book, pairs: int, game: str) -> list[LocalGame]:
    """The games that tie the levels to the random example: greedy and every level against
    random, and each level against the one below it."""
    results = play_pairs(GreedyBot, RandomBot, book, pairs, game, "greedy", "random")
    for level in levels:
        results += play_pairs(
            LEVEL_CLASSES[level],
            RandomBot,
            book,
            max(1, pairs // 2),
            game,
            f"reference-L{level}",
            "random",
        )
    for a, b in pairwise(levels):
        results += play_pairs(
            LEVEL_CLASSES[b],
            LEVEL_CLASSES[a],
            book,
            pairs,
            game,
            f"reference-L{b}",
            f"reference-L{a}",
        )
    return results


if __name__ == "__main__":
    raise SystemExit(main())
