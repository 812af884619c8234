"""How fast the ATT placer's search is: resting-position generations per second.

    .venv/bin/python bench/att.py [--json]

Positions come from seeded games of a random chooser against a one-ply greedy placer (wells of
every height, with holes and overhangs). A *generation* is the full set of reachable resting
positions for one pending piece (all orientations), as ``State.rests()`` builds it; the second
figure also builds every ``Drop`` object, as iterating ``legal_moves`` does. The baseline,
timed in the same run on the same positions, is the obvious search: a breadth-first walk over
(row, column) with a cell-by-cell collision test per step; the two are checked to agree.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.att import AsymmetricTetrisTactics, AttState, Choice
from engine.att.pieces import PIECES, SHAPES, Shape
from engine.att.search import (
    Geometry,
    first_filled_row,
    geometry,
    middle_columns,
    rest_masks,
)


def positions(count: int, seed: int = 1) -> list[AttState]:
    """Placer-to-move positions sampled along greedy-placer games."""
    rng = random.Random(seed)
    game = AsymmetricTetrisTactics(max_placer_turns=0, max_rows=0)
    out: list[AttState] = []
    while len(out) < count:
        state = game.new_state()
        while state.outcome() is None and len(out) < count:
            state.apply(Choice(rng.choice(PIECES)))
            if state.outcome() is not None:
                break
            out.append(state.copy())
            moves = list(state.legal_moves)
            # Mostly low, tidy placements so the wells fill up slowly; sometimes anything.
            move = min(moves, key=lambda m: m.row) if rng.random() < 0.7 else rng.choice(moves)
            state.apply(move)
    return out


def baseline_rests(rows: tuple[int, ...], s: Shape, width: int) -> set[tuple[int, int]]:
    """Resting ``(row, column)`` of shape ``s``: breadth-first over slides and drops from the
    entry positions, testing every cell of the shape at every step."""
    height = len(rows)
    mid = set(middle_columns(width))

    def fits(r: int, c: int) -> bool:
        for dr, dc in s.cells:
            rr, cc = r + dr, c + dc
            if not (0 <= rr < height and 0 <= cc < width) or (rows[rr] >> cc) & 1:
                return False
        return True

    top = [dc for dr, dc in s.cells if dr == 0]
    frontier = [
        (0, c)
        for c in range(width - s.width + 1)
        if any(c + dc in mid for dc in top) and fits(0, c)
    ]
    seen = set(frontier)
    rests: set[tuple[int, int]] = set()
    while frontier:
        r, c = frontier.pop()
        if not fits(r + 1, c):
            rests.add((r, c))
        for nxt in ((r + 1, c), (r, c - 1), (r, c + 1)):
            if nxt not in seen and fits(*nxt):
                seen.add(nxt)
                frontier.append(nxt)
    return rests


def _best_of(runs: int, work: Callable[[], None]) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="end with one JSON object")
    args = parser.parse_args()
    sample = positions(2000)
    geo = geometry(10, 20)
    tops = [first_filled_row(s.rows) for s in sample]
    height = 20 - sorted(tops)[len(tops) // 2]
    print(f"{len(sample)} positions, median stack height {height}")
    count = len(sample)
    _check_agreement(sample, geo)
    baseline, search_only, legal_drops = _workloads(sample, geo)
    search_s = _best_of(3, search_only)
    print(
        f"search only:        {count / search_s:8.0f} generations/s "
        f"({1e6 * search_s / count:.1f} us)"
    )
    drops_s = _best_of(3, legal_drops)
    moves = sum(len(s.legal_moves) for s in sample) / count
    print(
        f"listing legal Drops: {count / drops_s:7.0f} generations/s "
        f"({1e6 * drops_s / count:.1f} us, {moves:.1f} resting positions each)"
    )
    baseline_s = _best_of(1, baseline)
    print(
        f"baseline (BFS):     {count / baseline_s:8.0f} generations/s "
        f"(search is x{baseline_s / search_s:.0f})"
    )
    if args.json:
        figures = {
            "search_generations_per_s": round(count / search_s),
            "legal_drops_generations_per_s": round(count / drops_s),
            "baseline_generations_per_s": round(count / baseline_s),
            "search_ratio": round(baseline_s / search_s, 1),
            "legal_drops_ratio": round(baseline_s / drops_s, 1),
            "positions": count,
            "median_stack_height": height,
            "resting_positions_mean": round(moves, 1),
        }
        print(json.dumps(figures))


def _check_agreement(sample: list[AttState], geo: Geometry) -> None:
    """The two searches must agree (on every tenth position) before either is timed."""
    for state in sample[::10]:
        assert state.pending is not None
        for s in SHAPES[state.pending]:
            fast = {
                (r, c)
                for r, cols in rest_masks(geo, state.rows, s)
                for c in range(10)
                if cols >> c & 1
            }
            assert fast == baseline_rests(state.rows, s, 10), (state, s)


def _workloads(
    sample: list[AttState], geo: Geometry
) -> tuple[Callable[[], None], Callable[[], None], Callable[[], None]]:
    """The timed work over ``sample``: the baseline search, the search alone, and listing the
    legal drops as a state does."""

    def baseline() -> None:
        for state in sample:
            assert state.pending is not None
            for s in SHAPES[state.pending]:
                baseline_rests(state.rows, s, 10)

    def search_only() -> None:
        for state in sample:
            piece = state.pending
            assert piece is not None
            top = first_filled_row(state.rows)
            for s in SHAPES[piece]:
                rest_masks(geo, state.rows, s, top)

    def legal_drops() -> None:
        for state in sample:
            state._rests = None  # measure the search, not the cache
            list(state.legal_moves)

    return baseline, search_only, legal_drops


if __name__ == "__main__":
    main()
