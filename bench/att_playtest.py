"""Playtest ATT to choose the defaults of N (max placer turns) and M (max rows cleared).

Simple bots play each other with both limits switched off, up to a cap on placer turns. The
limits only ever cut a game short and these bots ignore them, so one capped game tells the
result of the same game under every (N, M): the chooser wins it iff its win (a block in the
top row, or a piece with no entry) comes before the placer's N-th turn and M-th row.

    .venv/bin/python bench/att_playtest.py --games 40 --cap 400

prints a Markdown table of the chooser's win rate for every pairing over the N x M grid.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.att import AsymmetricTetrisTactics, AttState, Choice, Drop
from engine.att.pieces import PIECES
from engine.outcome import Termination

Rows = tuple[int, ...]
CHOOSER_WINS = {Termination.TOP_ROW, Termination.NO_ENTRY}


def evaluate(rows: Rows, cleared: int, width: int) -> float:
    """A one-ply Tetris heuristic (height, holes, bumpiness, rows), ATT endings at the ends."""
    if rows[0]:
        return -1e9
    if cleared >= 4:
        return 1e9
    height = len(rows)
    heights = [0] * width
    covered = holes = 0
    for r, row in enumerate(rows):
        if not row and not covered:
            continue
        new = row & ~covered
        while new:
            low = new & -new
            heights[low.bit_length() - 1] = height - r
            new ^= low
        holes += (covered & ~row).bit_count()
        covered |= row
    bump = sum(abs(heights[i] - heights[i + 1]) for i in range(width - 1))
    return -0.51 * sum(heights) + 0.76 * cleared - 0.36 * holes - 0.18 * bump


def evaluate_well(rows: Rows, cleared: int, width: int) -> float:
    """A stronger measure after Dellacherie / El-Tetris: transitions, holes and wells."""
    if rows[0]:
        return -1e9
    if cleared >= 4:
        return 1e9
    full = (1 << width) - 1
    row_trans = col_trans = holes = wells = 0
    covered = 0
    above = 0
    depth = [0] * width
    for row in rows:
        ext = (row << 1) | 1 | (1 << (width + 1))
        row_trans += (ext ^ (ext >> 1)).bit_count() - 1
        col_trans += (row ^ above).bit_count()
        holes += (covered & ~row).bit_count()
        covered |= row
        above = row
        well = ~row & (((row << 1) | 1) & full) & ((row >> 1) | (1 << (width - 1)))
        for c in range(width):
            if (well >> c) & 1:
                depth[c] += 1
                wells += depth[c]
            else:
                depth[c] = 0
    col_trans += (~above & full).bit_count()
    return 3.4 * cleared - 3.2 * row_trans - 9.3 * col_trans - 7.9 * holes - 3.4 * wells


MEASURE = {"greedy": evaluate, "greedy2": evaluate_well}


def best_drop(
    state: AttState, rng: random.Random, measure: str = "greedy"
) -> tuple[float, Drop | None]:
    """The greedy placer's choice and its value (``-inf`` when there is none)."""
    best: list[Drop] = []
    value = float("-inf")
    score = MEASURE[measure]
    for move in state.rests():
        rows, cleared = state.placed(move)
        v = score(rows, cleared, state.game.width)
        if v > value:
            best, value = [move], v
        elif v == value:
            best.append(move)
    return value, (rng.choice(best) if best else None)


ChooserBot = Callable[[AttState, random.Random], str]
PlacerBot = Callable[[AttState, random.Random], Drop]


def random_chooser(state: AttState, rng: random.Random) -> str:
    return rng.choice(PIECES)


def _adversary(measure: str) -> ChooserBot:
    def choose(state: AttState, rng: random.Random) -> str:
        """The piece whose best placement (by ``measure``) is worst, as Bastet does."""
        scores = []
        for piece in PIECES:
            state.apply(Choice(piece))
            scores.append((best_drop(state, rng, measure)[0], rng.random(), piece))
            state.undo()
        return min(scores)[2]

    return choose


def random_placer(state: AttState, rng: random.Random) -> Drop:
    return rng.choice(list(state.rests()))


def _greedy(measure: str) -> PlacerBot:
    def place(state: AttState, rng: random.Random) -> Drop:
        move = best_drop(state, rng, measure)[1]
        assert move is not None
        return move

    return place


def lookahead_placer(state: AttState, rng: random.Random) -> Drop:
    """The best of the greedy2 placer's top five moves against the worst next piece."""
    scored = []
    for move in state.rests():
        rows, cleared = state.placed(move)
        scored.append((evaluate_well(rows, cleared, state.game.width), rng.random(), move))
    scored.sort(reverse=True)
    best, best_value = scored[0][2], float("-inf")
    for now, _, move in scored[:5]:
        if now >= 1e9:
            return move
        state.apply(move)
        if state.outcome() is not None:
            value = now
        else:
            value = float("inf")
            for piece in PIECES:
                state.apply(Choice(piece))
                value = min(value, best_drop(state, rng, "greedy2")[0])
                state.undo()
        state.undo()
        if value > best_value:
            best, best_value = move, value
    return best


CHOOSERS: dict[str, ChooserBot] = {
    "random": random_chooser,
    "greedy": _adversary("greedy"),
    "greedy2": _adversary("greedy2"),
}
PLACERS: dict[str, PlacerBot] = {
    "random": random_placer,
    "greedy": _greedy("greedy"),
    "greedy2": _greedy("greedy2"),
    "lookahead": lookahead_placer,
}


@dataclass(frozen=True)
class Trace:
    """One capped game: rows cleared after each placer turn and how it ended (if it did)."""

    rows_after: tuple[int, ...]
    ending: Termination | None

    def chooser_wins(self, n: int, m: int) -> bool:
        if self.ending not in CHOOSER_WINS:
            return False
        turns = len(self.rows_after)
        # Top row: ends at the placer's last turn; no entry: before the next turn is made.
        if turns > n or (self.ending is Termination.NO_ENTRY and turns >= n):
            return False
        return not any(rows >= m for rows in self.rows_after)


def play(chooser: str, placer: str, seed: int, cap: int) -> Trace:
    rng = random.Random(seed)
    state = AsymmetricTetrisTactics(max_placer_turns=cap, max_rows=0).new_state()
    rows_after = []
    while state.outcome() is None:
        state.apply(Choice(CHOOSERS[chooser](state, rng)))
        if state.outcome() is not None:
            break
        state.apply(PLACERS[placer](state, rng))
        rows_after.append(state.rows_cleared)
    outcome = state.outcome()
    assert outcome is not None
    ending = None if outcome.termination is Termination.TURNS_SURVIVED else outcome.termination
    return Trace(tuple(rows_after), ending)


def _job(args: tuple[str, str, int, int]) -> tuple[str, str, Trace]:
    chooser, placer, seed, cap = args
    return chooser, placer, play(chooser, placer, seed, cap)


def main(argv: list[str] | None = None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    ns = [int(x) for x in args.turns.split(",")]
    ms = [int(x) for x in args.rows.split(",")]
    if max(ns) > args.cap:
        parser.error("every N must be at most --cap")
    jobs = [
        (c, p, 1000 * i + seed, args.cap)
        for i, (c, p) in enumerate(
            (c, p) for c in args.choosers.split(",") for p in args.placers.split(",")
        )
        for seed in range(args.games)
    ]
    start = time.perf_counter()
    traces: dict[tuple[str, str], list[Trace]] = {}
    with ProcessPoolExecutor(args.workers) as pool:
        for c, p, trace in pool.map(_job, jobs):
            traces.setdefault((c, p), []).append(trace)
    elapsed = time.perf_counter() - start
    print(f"{len(jobs)} games, cap {args.cap} placer turns, {elapsed:.0f} s\n")
    rates: dict[str, dict[str, float]] = {}
    for (c, p), group in traces.items():
        print(f"### chooser {c} vs placer {p} ({len(group)} games)\n")
        pairing = _report_pairing(group, args.cap, ns, ms)
        if pairing:
            rates[f"{c} vs {p}"] = pairing
    if args.json:
        figures = {
            "games": len(jobs),
            "cap": args.cap,
            "elapsed_s": round(elapsed, 1),
            "chooser_win_rate": rates,
        }
        print(json.dumps(figures))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40, help="games per pairing")
    parser.add_argument("--cap", type=int, default=400, help="placer turns per game at most")
    parser.add_argument("--turns", default="25,50,100,200,400", help="N values")
    parser.add_argument("--rows", default="10,25,50,100,200", help="M values")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--choosers", default=",".join(CHOOSERS), help="chooser bots")
    parser.add_argument("--placers", default=",".join(PLACERS), help="placer bots")
    parser.add_argument(
        "--json", action="store_true", help="end with one JSON object of the win rates"
    )
    return parser


def _report_pairing(group: list[Trace], cap: int, ns: list[int], ms: list[int]) -> dict[str, float]:
    """Print one pairing's unlimited games and its table of chooser win rates under each
    ``(N, M)``; returns the rates by ``"N=n,M=m"``."""
    lengths = sorted(len(t.rows_after) for t in group)
    endings: dict[str, int] = {}
    for t in group:
        key = t.ending.value if t.ending else f"cap_{cap}"
        endings[key] = endings.get(key, 0) + 1
    rows = sorted(t.rows_after[-1] if t.rows_after else 0 for t in group)
    print(
        f"Unlimited game: median {lengths[len(lengths) // 2]} placer turns, median "
        f"{rows[len(rows) // 2]} rows cleared; endings "
        + ", ".join(f"{k} {v}" for k, v in sorted(endings.items()))
        + "\n"
    )
    print("Chooser win rate | " + " | ".join(f"M={m}" for m in ms))
    print("---|" + "---|" * len(ms))
    rates: dict[str, float] = {}
    for n in ns:
        cells = [sum(t.chooser_wins(n, m) for t in group) / len(group) for m in ms]
        print(f"N={n} | " + " | ".join(f"{x:.0%}" for x in cells))
        for m, x in zip(ms, cells, strict=True):
            rates[f"N={n},M={m}"] = round(x, 3)
    print()
    return rates


if __name__ == "__main__":
    main()
