"""Benchmark: the SPRT's pair throughput with launched bots, and the LLR update's cost.

``pairs_per_s_warm`` and ``pairs_per_s_cold``: the same pairs, sandboxed, with the bots taken
from a warm pool (:mod:`referee.sandbox.warm`) and started cold, in one run.
``pairs_per_s`` (the cold figure): game pairs per second of random vs greedy (both launched as
real processes on private local referees, Tetress, shipped openings), ``--concurrency`` pairs
at once (default 2), for ``--pairs`` pairs; the baseline in the same run is one pair played alone
(concurrency 1). ``llr_update_us``: microseconds to count a pair and recompute the LLR
(the GSPRT's root finding), averaged over many updates; its baseline is the normal
approximation of the same LLR.

Usage: python bench/sprt.py [--pairs 4] [--concurrency 2] [--json]
With ``--json`` the last line is one JSON object: ``pairs_per_s``, ``llr_update_us``, ...
Figures are noisy on a machine whose cores are shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

from engine.records.openings import default_book_path, load_book  # noqa: E402
from engine.registry import load_game  # noqa: E402
from referee.analysis.sprt import Sprt, llr_normal_approx  # noqa: E402
from referee.analysis.sprt_run import launched_games, run_sprt  # noqa: E402
from referee.sandbox.isolation import Isolation  # noqa: E402
from referee.sandbox.launch import BotSpec  # noqa: E402
from referee.sandbox.warm import WarmTerms, demand, may_import_numpy  # noqa: E402

SPECS = [
    BotSpec("sdk", "client_sdk.examples.random_bot"),
    BotSpec("sdk", "client_sdk.examples.greedy_bot"),
]


#: The warm run's launches served warm and started cold (its pool's hits and misses).
WARM_SERVED = {"hits": 0, "misses": 0}


def pairs_rate(pairs: int, concurrency: int, warm: bool = False) -> float:
    """Pairs per second, every bot launched sandboxed (``warm``: from a warm pool holding two
    sandboxes per game that may start next, made in the timed run like any SPRT's)."""
    game = load_game("tetress")
    book = load_book(default_book_path("tetress"))
    # Hypotheses a thousandth of an Elo apart: the LLR stays near 0 whatever the results, so
    # no bound is reached and every pair is played (wide ones stop a lopsided match early).
    test = Sprt(0.0, 0.001, 0.001, 0.001)
    play = launched_games(SPECS, game, isolation=Isolation.BWRAP)

    async def run() -> None:
        slots = 2 * concurrency if warm else 0
        numpy = may_import_numpy(SPECS)
        async with demand(slots, WarmTerms(memory_mb=None), Isolation.BWRAP, numpy=numpy) as need:
            if need is not None:
                need.resize(slots, 4 * pairs)  # four launches a pair
            await run_sprt(test, play, book=book, concurrency=concurrency, max_pairs=pairs)
            if need is not None and warm:
                WARM_SERVED.update(hits=need.pool.hits, misses=need.pool.misses)

    start = time.perf_counter()
    asyncio.run(run())
    elapsed = time.perf_counter() - start
    assert test.pairs == pairs, f"{test.pairs} of {pairs} pairs played: {test.status()}"
    return test.pairs / elapsed


def llr_update_us(updates: int = 2000) -> tuple[float, float]:
    rng = random.Random(3)
    test = Sprt(0.0, 10.0)
    outcomes = [rng.choice((0, 0.5, 1, 1, 1, 1.5, 2)) for _ in range(updates)]
    start = time.perf_counter()
    for points in outcomes:
        test.add_pair(points)
    exact = (time.perf_counter() - start) / updates * 1e6
    start = time.perf_counter()
    for _ in range(updates):
        llr_normal_approx(test.counts, 0.0, 10.0)
    approx = (time.perf_counter() - start) / updates * 1e6
    return exact, approx


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from referee.telemetry import logs

    logs.configure("console", "WARNING")
    exact, approx = llr_update_us()
    print(
        f"LLR update: {exact:.1f} us (normal approximation {approx:.2f} us, "
        f"ratio {exact / approx:.0f}x)"
    )
    alone = pairs_rate(1, 1)
    cold = pairs_rate(args.pairs, args.concurrency)
    rate = pairs_rate(args.pairs, args.concurrency, warm=True)
    print(
        f"random vs greedy, launched: {cold:.3f} pairs/s at concurrency {args.concurrency} "
        f"(one pair alone: {alone:.3f} pairs/s, ratio {cold / alone:.2f}; noisy: shared cores)"
    )
    print(
        f"  warm sandboxes: {rate:.3f} pairs/s, cold: {cold:.3f} pairs/s: "
        f"x{rate / cold:.2f} (target >= 2x); launches served warm {WARM_SERVED['hits']}, "
        f"cold {WARM_SERVED['misses']}"
    )
    if args.json:
        print(
            json.dumps(
                {
                    "pairs_per_s": round(cold, 4),
                    "pairs_per_s_warm": round(rate, 4),
                    "pairs_per_s_cold": round(cold, 4),
                    "warm_ratio": round(rate / cold, 3),
                    "warm_hits": WARM_SERVED["hits"],
                    "warm_misses": WARM_SERVED["misses"],
                    "llr_update_us": round(exact, 2),
                    "baseline_pairs_per_s": round(alone, 4),
                    "llr_approx_us": round(approx, 3),
                    "pairs": args.pairs,
                    "concurrency": args.concurrency,
                }
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
