"""Benchmark: the maximum-likelihood Elo fit for 300 bots and 45,000 games (target < 2 s).

Measures, in one run on the same simulated games:
- the library fit (``referee.ratings.fit_ratings``: tally into matrices, Newton, covariance),
- the straightforward baseline: gradient ascent in plain Python that walks every game at
  every iteration (no aggregation, first-order steps) until it agrees with the optimum to
  0.01 Elo; the ratio is baseline time / fit time,
- the same gradient ascent vectorised with numpy, for an honest second comparison (on this
  dense, well-connected schedule first-order steps converge fast; they give no intervals),
- the whole leaderboard (fit, incremental Elo, cross table, LOS matrix) for context.

BLAS runs single-threaded unless ``--blas-threads`` says otherwise: on a shared 2-core
machine OpenBLAS threads wait on each other and make a 300x300 solve several times slower.

Usage: python bench/ratings.py [--bots 300] [--games 45000] [--seed 1] [--json]
With ``--json`` the last line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path


def _blas_threads(argv: list[str]) -> str:
    for i, a in enumerate(argv):
        if a == "--blas-threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--blas-threads="):
            return a.split("=", 1)[1]
    return "1"


# Must be set before numpy loads OpenBLAS.
os.environ["OPENBLAS_NUM_THREADS"] = _blas_threads(sys.argv[1:])

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.ratings.mle import ELO_PER_NAT, Fit, fit_ratings  # noqa: E402
from referee.ratings.results import GameResult  # noqa: E402
from referee.ratings.table import build_leaderboard  # noqa: E402

BAND = 8


def simulate(
    bots: int, games: int, seed: int, schedule: str = "random"
) -> tuple[list[GameResult], np.ndarray]:
    """``games`` games as game pairs between random distinct couples; 10% draws.

    ``schedule="band"`` only lets bots meet the :data:`BAND` nearest in true strength on
    either side (as in a long Swiss event or a ladder): a sparse, chain-like schedule.
    """
    rng = np.random.default_rng(seed)
    true = rng.normal(0.0, 200.0, bots)
    rank = np.argsort(np.argsort(true))
    couples = np.array(
        [
            (i, j)
            for i in range(bots)
            for j in range(i + 1, bots)
            if schedule == "random" or abs(int(rank[i]) - int(rank[j])) <= BAND
        ]
    )
    pairs = games // 2
    pick = couples[rng.choice(len(couples), size=pairs, replace=pairs > len(couples))]
    first = np.concatenate([pick[:, 0], pick[:, 1]])
    second = np.concatenate([pick[:, 1], pick[:, 0]])
    p = 1.0 / (1.0 + 10.0 ** ((true[second] - true[first]) / 400.0))
    draw = 0.2 * np.minimum(p, 1.0 - p)
    u = rng.random(len(first))
    score = np.where(u < p - draw / 2, 1.0, np.where(u < p + draw / 2, 0.5, 0.0))
    names = [f"bot{i:03d}" for i in range(bots)]
    results = [
        GameResult(names[a], names[b], float(s))
        for a, b, s in zip(first.tolist(), second.tolist(), score.tolist(), strict=True)
    ]
    return results, true


def virtual_draws(
    results: list[GameResult], index: dict[str, int], prior: float
) -> list[tuple[int, int, float]]:
    """The fit's virtual draws written out per couple: ``(i, j, games)``."""
    played: dict[int, int] = {}
    met: dict[tuple[int, int], int] = {}
    for r in results:
        a, b = index[r.first], index[r.second]
        played[a] = played.get(a, 0) + 1
        played[b] = played.get(b, 0) + 1
        key = (min(a, b), max(a, b))
        met[key] = met.get(key, 0) + 1
    return [
        (i, j, 0.5 * prior * n * (1.0 / played[i] + 1.0 / played[j])) for (i, j), n in met.items()
    ]


def python_baseline_fit(
    results: list[GameResult],
    players: tuple[str, ...],
    target: np.ndarray,
    prior: float,
    tolerance_elo: float = 0.01,
    max_iterations: int = 10_000,
) -> tuple[np.ndarray, int]:
    """Per-game gradient ascent in plain Python on the same likelihood and virtual draws,
    with the same steps as :func:`numpy_baseline_fit`; returns mean-anchored Elo (1500) and
    the iterations it took to come within ``tolerance_elo`` of ``target``."""
    index = {p: i for i, p in enumerate(players)}
    n = len(players)
    virtual = virtual_draws(results, index, prior)
    games_per = [0.0] * n
    for r in results:
        games_per[index[r.first]] += 1
        games_per[index[r.second]] += 1
    # A step of 1/(games/4) per player: the inverse of the curvature at even odds.
    step = [4.0 / g for g in games_per]
    theta = [0.0] * n
    target_list = target.tolist()
    elo = [1500.0] * n
    for it in range(1, max_iterations + 1):
        grad = [0.0] * n
        for r in results:
            a, b = index[r.first], index[r.second]
            resid = r.score - 1.0 / (1.0 + math.exp(theta[b] - theta[a]))
            grad[a] += resid
            grad[b] -= resid
        for a, b, v in virtual:
            resid = v * (0.5 - 1.0 / (1.0 + math.exp(theta[b] - theta[a])))
            grad[a] += resid
            grad[b] -= resid
        theta = [t + s * g for t, s, g in zip(theta, step, grad, strict=True)]
        mean = sum(theta) / n
        elo = [(t - mean) * ELO_PER_NAT + 1500.0 for t in theta]
        if max(abs(e - x) for e, x in zip(elo, target_list, strict=True)) < tolerance_elo:
            return np.array(elo), it
    return np.array(elo), max_iterations


def numpy_baseline_fit(
    results: list[GameResult],
    players: tuple[str, ...],
    target: np.ndarray,
    prior: float,
    tolerance_elo: float = 0.01,
    max_iterations: int = 100_000,
) -> tuple[np.ndarray, int]:
    """:func:`python_baseline_fit` vectorised over the games with numpy."""
    index = {p: i for i, p in enumerate(players)}
    virtual = virtual_draws(results, index, prior)
    a = np.array([index[r.first] for r in results] + [i for i, _, _ in virtual])
    b = np.array([index[r.second] for r in results] + [j for _, j, _ in virtual])
    s = np.array([r.score for r in results] + [0.5 * v for _, _, v in virtual])
    weight = np.array([1.0] * len(results) + [v for _, _, v in virtual])
    n = len(players)
    real = len(results)
    games_per = np.bincount(a[:real], minlength=n) + np.bincount(b[:real], minlength=n)
    step = 4.0 / games_per
    theta = np.zeros(n)
    elo = np.full(n, 1500.0)
    for it in range(1, max_iterations + 1):
        p = 1.0 / (1.0 + np.exp(theta[b] - theta[a]))
        resid = s - weight * p
        grad = np.bincount(a, resid, n).astype(np.float64) - np.bincount(b, resid, n)
        theta += step * grad
        elo = (theta - theta.mean()) * ELO_PER_NAT + 1500.0
        if np.max(np.abs(elo - target)) < tolerance_elo:
            return elo, it
    return elo, max_iterations


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    results, true = simulate(args.bots, args.games, args.seed, args.schedule)
    run = _time_fits(results, args.repeat)
    coverage = _coverage(run.fit, true)
    figures = _figures(args, run, len(results), coverage)
    _print_summary(args, run, figures, coverage)
    if args.json:
        print(json.dumps(figures))
    return 0 if math.isfinite(run.fit_s) else 1


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bots", type=int, default=300)
    ap.add_argument("--games", type=int, default=45_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--schedule",
        choices=["random", "band"],
        default="random",
        help="who meets whom: random couples, or only near neighbours in strength",
    )
    ap.add_argument("--repeat", type=int, default=3, help="best of N for the library fit")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--blas-threads", default="1", help="OPENBLAS_NUM_THREADS (default 1)")
    return ap


@dataclass(frozen=True)
class _Run:
    """The library's fit, the two baselines' answers, and what each (and the leaderboard) took."""

    fit: Fit
    fit_s: float
    base_elo: np.ndarray
    base_iters: int
    base_s: float
    np_elo: np.ndarray
    np_iters: int
    np_s: float
    board_s: float


def _time_fits(results: list[GameResult], repeat: int) -> _Run:
    """Time the library fit (best of ``repeat``), then each baseline, then the leaderboard."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fit = fit_ratings(results)
        times.append(time.perf_counter() - t0)
    fit_s = min(times)

    t0 = time.perf_counter()
    base_elo, base_iters = python_baseline_fit(results, fit.players, fit.ratings, fit.prior_games)
    base_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    np_elo, np_iters = numpy_baseline_fit(results, fit.players, fit.ratings, fit.prior_games)
    np_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    build_leaderboard(results)
    board_s = time.perf_counter() - t0
    return _Run(fit, fit_s, base_elo, base_iters, base_s, np_elo, np_iters, np_s, board_s)


def _coverage(fit: Fit, true: np.ndarray) -> float:
    """How often a bot's true strength (centred as the fit is) lies in its 95% interval."""
    order = [int(p[3:]) for p in fit.players]
    centred = true[order] - true[order].mean() + 1500.0
    return float(
        np.mean(
            [abs(fit.ratings[i] - centred[i]) <= fit.ci95(p) for i, p in enumerate(fit.players)]
        )
    )


def _figures(args: argparse.Namespace, run: _Run, games: int, coverage: float) -> dict[str, object]:
    fit = run.fit
    return {
        "bots": args.bots,
        "schedule": args.schedule,
        "games": games,
        "mle_fit_s": round(run.fit_s, 4),
        "mle_iterations": fit.iterations,
        "mle_fit_baseline_s": round(run.base_s, 4),
        "baseline_iterations": run.base_iters,
        "ratio": round(run.base_s / run.fit_s, 1),
        "max_abs_diff_elo": round(
            max(float(np.max(np.abs(e - fit.ratings))) for e in (run.base_elo, run.np_elo)), 4
        ),
        "gradient_numpy_s": round(run.np_s, 4),
        "gradient_numpy_iterations": run.np_iters,
        "blas_threads": os.environ["OPENBLAS_NUM_THREADS"],
        "leaderboard_s": round(run.board_s, 4),
        "median_ci95_elo": round(float(np.median([fit.ci95(p) for p in fit.players])), 1),
        "true_in_ci95": round(coverage, 3),
        "target_s": 2.0,
    }


def _print_summary(
    args: argparse.Namespace, run: _Run, figures: dict[str, object], coverage: float
) -> None:
    fit_s, base_s, np_s = run.fit_s, run.base_s, run.np_s
    print(
        f"{figures['bots']} bots, {figures['games']} games, {args.schedule} schedule "
        f"(seed {args.seed})"
    )
    print(
        f"  MLE fit (tally + Newton + covariance): {fit_s:.3f} s "
        f"({run.fit.iterations} Newton iterations, best of {args.repeat})"
    )
    print(
        f"  baseline per-game gradient ascent:     {base_s:.3f} s "
        f"({run.base_iters} iterations to 0.01 Elo)"
    )
    print(f"  ratio baseline / MLE fit:              {base_s / fit_s:.1f}x")
    print(
        f"  same gradient ascent, numpy:           {np_s:.3f} s ({run.np_iters} iterations; "
        "no intervals)"
    )
    print(f"  max |baselines - fit|:                 {figures['max_abs_diff_elo']} Elo")
    print(f"  whole leaderboard (+cross table, LOS): {run.board_s:.3f} s")
    print(
        f"  median 95% CI: ±{figures['median_ci95_elo']} Elo; true strength inside: {coverage:.1%}"
    )
    print(f"  target < 2 s: {'met' if fit_s < 2.0 else 'MISSED'}")


if __name__ == "__main__":
    raise SystemExit(main())
