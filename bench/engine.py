"""Benchmark the Tetress engine on one core, against a straightforward baseline.

Measures, in one run and on one core:

* full legal-move generations per second on positions sampled from real games (the
  conformance games when present, else random games), where a generation is the complete
  legal set as 19 per-shape anchor bitmasks (:func:`engine.tetress.bitboard.legal_masks`);
* complete random games per second (uniform random moves until the game ends);
* the same two figures for a baseline that tries each of the 2299 placements against the board
  with plain set logic, and the ratios.

    .venv/bin/python bench/engine.py            # about 30 s
    .venv/bin/python bench/engine.py --json     # last line: one JSON object

No pass/fail: the figures are for people (and the closing notes of issue 2).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import finish
from engine.tetress import (
    SHAPES,
    Placement,
    Tetress,
    TetressState,
    bitboard,
    play_random_game,
    random_move,
)

N = 11
Cell = tuple[int, int]
#: A position as the baseline sees it: red's cells, blue's cells, the ply.
_Sets = tuple[set[Cell], set[Cell], int]
_REPO = Path(__file__).resolve().parents[1]
_DEFAULT_DIR = _REPO / "tests" / "data" / "conformance" / "tetress"


# -- the baseline: every placement tried against the board with set logic ---------------------

BASELINE_PLACEMENTS: list[frozenset[Cell]] = [
    frozenset(((r + dr) % N, (c + dc) % N) for dr, dc in shape.offsets)
    for shape in SHAPES
    for r in range(N)
    for c in range(N)
]
BASELINE_NEIGHBOURS: dict[Cell, tuple[Cell, ...]] = {
    (r, c): (((r - 1) % N, c), ((r + 1) % N, c), (r, (c - 1) % N), (r, (c + 1) % N))
    for r in range(N)
    for c in range(N)
}


def baseline_legal(red: set[Cell], blue: set[Cell], ply: int) -> list[frozenset[Cell]]:
    """The legal placements, trying all 2299 one by one."""
    occupied = red | blue
    own = blue if ply % 2 else red
    first = ply < 2
    legal = []
    for cells in BASELINE_PLACEMENTS:
        if occupied.isdisjoint(cells) and (
            first or any(n in own for cell in cells for n in BASELINE_NEIGHBOURS[cell])
        ):
            legal.append(cells)
    return legal


def baseline_random_game(rng: random.Random, turn_limit: int = 150) -> int:
    """A complete uniform random game on the baseline; returns the number of actions."""
    red: set[Cell] = set()
    blue: set[Cell] = set()
    ply = 0
    while ply < turn_limit:
        legal = baseline_legal(red, blue, ply)
        if not legal:
            break
        move = legal[rng.randrange(len(legal))]
        (blue if ply % 2 else red).update(move)
        occupied = red | blue
        gone: set[Cell] = set()
        for r in {r for r, _ in move}:
            if all((r, c) in occupied for c in range(N)):
                gone.update((r, c) for c in range(N))
        for c in {c for _, c in move}:
            if all((r, c) in occupied for r in range(N)):
                gone.update((r, c) for r in range(N))
        red -= gone
        blue -= gone
        ply += 1
    return ply


# -- positions --------------------------------------------------------------------------------


def sample_positions(limit: int, seed: int) -> tuple[list[TetressState], str]:
    """Positions before every action of the conformance games (else of random games)."""
    folder = Path(os.environ.get("TETRESS_CONFORMANCE_DIR", str(_DEFAULT_DIR)))
    game = Tetress()
    states: list[TetressState] = []
    files = sorted(folder.glob("*.jsonl"))
    for path in files:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                state = game.new_state()
                for step in json.loads(line)["plies"]:
                    states.append(state.copy())
                    state.apply(Placement.from_cells(step["move"]))
    source = f"conformance games in {folder}"
    if not states:
        rng = random.Random(seed)
        source = "random games (no conformance games found)"
        while len(states) < limit:
            state = game.new_state()
            while state.outcome() is None:
                states.append(state.copy())
                state.apply(random_move(state, rng))
    rng = random.Random(seed)
    if len(states) > limit:
        states = rng.sample(states, limit)
    return states, source


# -- timing -----------------------------------------------------------------------------------


# CPU time of this (single-threaded) process by default, so that other work on the machine
# does not count against the engine; ``--clock wall`` for elapsed time.
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}
clock = CLOCKS["cpu"]


def rate(run: Callable[[], int], seconds: float) -> float:
    """Units per second of ``run`` (which returns the units it did), repeated for ``seconds``."""
    run()  # warm up
    done = 0
    start = clock()
    elapsed = 0.0
    while elapsed < seconds:
        done += run()
        elapsed = clock() - start
    return done / elapsed


def pin(core: int | None) -> str:
    if core is None:
        return "one thread, not pinned"
    os.sched_setaffinity(0, {core})
    return f"pinned to core {core}"


def measure(seconds: float, positions: int, seed: int) -> dict[str, Any]:
    states, source = sample_positions(positions, seed)
    sets = [
        (
            {divmod(i, N) for i in range(N * N) if s.red_mask >> i & 1},
            {divmod(i, N) for i in range(N * N) if s.blue_mask >> i & 1},
            s.ply,
        )
        for s in states
    ]
    # The baseline must agree with the engine, or its figures mean nothing.
    for state, (red, blue, ply) in list(zip(states, sets, strict=True))[:50]:
        assert len(baseline_legal(red, blue, ply)) == len(state.legal_moves)
    gen, state_gen, game_rate, mean_plies = _engine_rates(states, seconds, seed)
    base_gen, base_games = _baseline_rates(sets, seconds, seed)
    return {
        "legal_generations_per_s": round(gen),
        "legal_views_per_s": round(state_gen),
        "random_games_per_s": round(game_rate, 1),
        "baseline_legal_generations_per_s": round(base_gen, 1),
        "baseline_random_games_per_s": round(base_games, 2),
        "legal_generations_ratio": round(gen / base_gen, 1),
        "random_games_ratio": round(game_rate / base_games, 1),
        "random_game_mean_plies": mean_plies,
        "positions": len(states),
        "position_source": source,
        "clock": "cpu" if clock is time.process_time else "wall",
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
    }


def _engine_rates(
    states: list[TetressState], seconds: float, seed: int
) -> tuple[float, float, float, float]:
    """The engine's rates: bare move generations, fresh legal-move views and random games per
    second; and the random games' mean length in plies."""
    masks = [
        (s.blue_mask if s.to_move else s.red_mask, s.red_mask | s.blue_mask, s.ply < 2)
        for s in states
    ]
    args = [(bitboard.replicate(own), bitboard.replicate(occ), first) for own, occ, first in masks]
    legal_masks = bitboard.legal_masks

    def generations() -> int:
        for own, occ, first in args:
            legal_masks(own, occ, first)
        return len(args)

    def state_generations() -> int:
        # Through the public API: a fresh (uncached) view and its count.
        for state in states:
            state._legal = None
            len(state.legal_moves)
        return len(states)

    rng = random.Random(seed)
    game = Tetress()
    tally = [0, 0]  # games, plies

    def games() -> int:
        for _ in range(20):
            tally[1] += play_random_game(game.new_state(), rng).ply
        tally[0] += 20
        return 20

    gen = rate(generations, seconds)
    state_gen = rate(state_generations, seconds / 2)
    game_rate = rate(games, seconds)
    return gen, state_gen, game_rate, round(tally[1] / tally[0], 1)


def _baseline_rates(sets: list[_Sets], seconds: float, seed: int) -> tuple[float, float]:
    """The set-based baseline's move generations (on a twentieth of the positions) and random
    games per second."""
    base_sets = sets[: max(1, len(sets) // 20)]

    def baseline_generations() -> int:
        for red, blue, ply in base_sets:
            baseline_legal(red, blue, ply)
        return len(base_sets)

    base_rng = random.Random(seed)

    def baseline_games() -> int:
        baseline_random_game(base_rng)
        return 1

    return rate(baseline_generations, seconds / 2), rate(baseline_games, seconds)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument("--positions", type=int, default=2000, help="positions sampled")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu", help="time measured")
    parser.add_argument("--pin", type=int, metavar="CORE", help="run on this CPU core only")
    args = parser.parse_args(list(argv) if argv is not None else None)
    global clock
    clock = CLOCKS[args.clock]
    pinned = pin(args.pin)
    figures = measure(args.seconds, args.positions, args.seed)
    print(
        f"Tetress engine benchmark ({figures['implementation']} {figures['python']}, {pinned}, "
        f"{args.clock} time)"
    )
    print(f"positions: {figures['positions']} from {figures['position_source']}")
    print(
        f"legal-move generations/s: {figures['legal_generations_per_s']:>12,}   "
        f"baseline {figures['baseline_legal_generations_per_s']:>10,}   "
        f"x{figures['legal_generations_ratio']}"
    )
    print(f"  (through state.legal_moves + len(): {figures['legal_views_per_s']:,}/s)")
    print(
        f"complete random games/s:  {figures['random_games_per_s']:>12,}   "
        f"baseline {figures['baseline_random_games_per_s']:>10,}   "
        f"x{figures['random_games_ratio']}"
    )
    return finish(figures, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
