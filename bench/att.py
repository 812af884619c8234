"""How fast the ATT placer's search is: resting-position generations per second.

    .venv/bin/python bench/att.py

Positions come from seeded games of a random chooser against a one-ply greedy placer (wells of
every height, with holes and overhangs). A *generation* is the full set of reachable resting
positions for one pending piece (all orientations), as ``State.rests()`` builds it; the second
figure also builds every ``Drop`` object, as iterating ``legal_moves`` does.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.att import AsymmetricTetrisTactics, AttState, Choice
from engine.att.pieces import PIECES, SHAPES
from engine.att.search import first_filled_row, geometry, rest_masks


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


def _best_of(runs: int, work: Callable[[], None]) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    sample = positions(2000)
    geo = geometry(10, 20)
    tops = [first_filled_row(s.rows) for s in sample]
    print(f"{len(sample)} positions, median stack height {20 - sorted(tops)[len(tops) // 2]}")
    count = len(sample)

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

    elapsed = _best_of(3, search_only)
    print(
        f"search only:        {count / elapsed:8.0f} generations/s ({1e6 * elapsed / count:.1f} us)"
    )
    elapsed = _best_of(3, legal_drops)
    moves = sum(len(s.legal_moves) for s in sample) / count
    print(
        f"listing legal Drops: {count / elapsed:7.0f} generations/s "
        f"({1e6 * elapsed / count:.1f} us, {moves:.1f} resting positions each)"
    )


if __name__ == "__main__":
    main()
