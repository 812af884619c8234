"""Benchmark: tournament formats side by side on simulated classes (no bot processes).

For N = 30, 100 and 300 bots, ``--classes`` simulated classes (default 200) each: strengths
normal with a standard deviation of 250 Elo, outcomes from the Elo model with draws (20%
between equals; ``bench/formats_sim.py`` states the model), every pairing a game pair with
the sides swapped, every format ranked by the platform's maximum-likelihood fit. Formats:

- the double round robin (every pair meets once as a game pair: N(N-1) games): the baseline;
- Swiss (the platform's Dutch pairing) after ceil(log2 N), 7, 9 and 11 rounds;
- the adaptive format (``referee.tournament.adaptive``) at several game budgets: the games of
  a 9-round Swiss and 10% ... 33% of the round robin's;
- the plain schedule the adaptive one must beat: neighbours in the current ratings;
- a ceiling no real schedule reaches: pairing by the *true* strengths (``true order``), every
  bot a game pair a round, at the adaptive format's 25% budget.

Before the tables, a check of the simulator against a known answer: the expected Kendall tau
of a double round robin of three bots, exactly (every outcome enumerated) and simulated.

Per format: games, Kendall tau and Spearman rho against the true order, P(top 1 right),
P(top 10 exactly right: the same bots in the same order), P(top 10 set right), mean absolute
rank error, each as mean ± its standard error over the classes. Every format of one class
plays on the same strengths (common random numbers), so the differences to Swiss and to the
round robin are also given with the standard error of the paired difference.

Usage: python bench/formats.py [--sizes 30,100,300] [--classes 200] [--quick] [--jobs 1]
                               [--seed 1] [--json]
``--quick``: 12 classes (a minute or two). With ``--json`` the last line is one JSON object
for the largest size: ``kendall_tau_rr``, ``kendall_tau_swiss`` (9 rounds),
``kendall_tau_adaptive`` (at ``games_adaptive``), ``games_rr``, ``games_swiss``,
``games_adaptive`` (the smallest budget within 0.02 of the round robin's tau, or null),
``kendall_tau_adaptive_at_swiss_games`` and the standard errors.
"""

from __future__ import annotations

import os

# One core per process: the machine is shared, and numpy's threads would fight the pool.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "bench"))

import numpy as np  # noqa: E402
from formats_sim import (  # noqa: E402
    Class,
    adaptive_pairs,
    neighbour_pairs,
    round_robin_tau_exact,
    run_rated_rounds,
    run_round_robin,
    run_swiss,
    true_order_pairs,
)

from bench.common import finish  # noqa: E402

BUDGET_SHARES = (0.10, 0.20, 0.25, 0.28, 0.30, 0.33)
BOUND_CLASSES = 20
"""Classes (of the extended ones) that also run the true-order ceiling (its matching of
every pair each round costs the most)."""
CHECK_STRENGTHS = (150.0, 0.0, -100.0)
CHECK_CLASSES = 4000
METRICS = ("tau", "rho", "top1", "top10", "top10_set", "rank_error")
TARGET_GAP = 0.02


def swiss_rounds(n: int) -> list[int]:
    return sorted({r for r in (math.ceil(math.log2(n)), 7, 9, 11) if r < n})


def budgets(n: int, extended: bool) -> list[int]:
    """The adaptive format's budgets in rounds (n games each): a 9-round Swiss's games, and
    the whole rounds within each share of the round robin's games (beyond 25% only on the
    ``extended`` classes)."""
    shares = [s for s in BUDGET_SHARES if extended or s <= 0.25]
    return sorted({9, *(int(share * (n - 1)) for share in shares)})


def one_class(args: tuple[int, int, int, bool]) -> dict[str, dict[str, float]]:
    """Every format on class ``k`` of size ``n`` (same strengths for all); the plain
    neighbour schedule and the adaptive budgets beyond 25% only if ``extended``."""
    n, seed, k, extended = args

    def fresh() -> Class:
        return Class.draw(n, np.random.default_rng([seed, n, k]))

    rows = run_round_robin(fresh())
    rows |= run_swiss(fresh(), swiss_rounds(n))
    rows |= run_rated_rounds(fresh(), adaptive_pairs, "adaptive", budgets(n, extended))
    quarter = int(0.25 * (n - 1))
    if extended:
        rows |= run_rated_rounds(fresh(), neighbour_pairs, "neighbours", [9, quarter])
    if extended and k < BOUND_CLASSES:
        rows |= run_rated_rounds(fresh(), true_order_pairs, "true order", [quarter])
    return rows


def summarise(runs: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Mean and standard error of every metric of every row, and the paired differences of
    tau to the round robin and to the 9-round Swiss."""
    out: dict[str, dict[str, float]] = {}
    for label in sorted({label for r in runs for label in r}):
        runs_of = [r for r in runs if label in r]
        table: dict[str, float] = {"games": runs_of[0][label]["games"], "classes": len(runs_of)}
        for metric in METRICS:
            values = np.array([r[label][metric] for r in runs_of])
            table[metric] = float(values.mean())
            table[f"{metric}_se"] = float(values.std(ddof=1) / math.sqrt(len(values)))
        for base, key in (("round robin", "vs_rr"), ("swiss 9 rounds", "vs_swiss9")):
            if base in runs[0]:
                d = np.array([r[label]["tau"] - r[base]["tau"] for r in runs_of])
                table[key] = float(d.mean())
                table[f"{key}_se"] = float(d.std(ddof=1) / math.sqrt(len(d)))
        out[label] = table
    return out


def order(label: str) -> tuple[int, int]:
    kind = ("round", "swiss", "adaptive", "neighbours", "true").index(label.split(" ")[0])
    digits = "".join(ch for ch in label if ch.isdigit())
    return kind, int(digits or 0)


def print_table(n: int, classes: int, table: dict[str, dict[str, float]], cpu: float) -> None:
    print(f"\nN = {n} bots, {classes} classes (strengths ~ normal, sd 250 Elo; {cpu:.0f} s wall)")
    print(
        f"{'format':<22}{'runs':>5}{'games':>7} {'Kendall tau':>15} {'Spearman rho':>15} "
        f"{'P(top1)':>12} {'P(top10)':>12} {'P(top10 set)':>12} {'rank err':>12} "
        f"{'tau - RR':>15} {'tau - Swiss9':>15}"
    )
    for label in sorted(table, key=order):
        t = table[label]

        def cell(m: str, digits: int = 3, t: dict[str, float] = t) -> str:
            return f"{t[m]:.{digits}f}±{t[m + '_se']:.{digits}f}"

        diffs = [
            f"{t[k]:+.4f}±{t[k + '_se']:.4f}" if k in t else "" for k in ("vs_rr", "vs_swiss9")
        ]
        print(
            f"{label:<22}{int(t['classes']):>5}{int(t['games']):>7} "
            f"{cell('tau', 4):>15} {cell('rho', 4):>15} "
            f"{cell('top1', 2):>12} {cell('top10', 2):>12} {cell('top10_set', 2):>12} "
            f"{cell('rank_error', 2):>12} {diffs[0]:>15} {diffs[1]:>15}"
        )


def verdict(table: dict[str, dict[str, float]]) -> dict[str, object]:
    """The figures the issue's targets are stated in (for one size)."""
    rr, swiss = table["round robin"], table["swiss 9 rounds"]
    adaptive = sorted(
        (t for k, t in table.items() if k.startswith("adaptive")), key=lambda t: t["games"]
    )
    met = [t for t in adaptive if t["vs_rr"] >= -TARGET_GAP]
    first = met[0] if met else None
    at_swiss = table["adaptive 9 rounds"]
    quarter = max(
        (t for t in adaptive if t["games"] <= 0.25 * rr["games"]), key=lambda t: t["games"]
    )
    return {
        "kendall_tau_rr": rr["tau"],
        "kendall_tau_swiss": swiss["tau"],
        "kendall_tau_adaptive": first["tau"] if first else None,
        "games_rr": int(rr["games"]),
        "games_swiss": int(swiss["games"]),
        "games_adaptive": int(first["games"]) if first else None,
        "games_adaptive_share_of_rr": first["games"] / rr["games"] if first else None,
        "kendall_tau_adaptive_at_swiss_games": at_swiss["tau"],
        "adaptive_minus_swiss_at_swiss_games": at_swiss["vs_swiss9"],
        "adaptive_minus_swiss_se": at_swiss["vs_swiss9_se"],
        "kendall_tau_swiss_se": swiss["tau_se"],
        "kendall_tau_adaptive_at_swiss_games_se": at_swiss["tau_se"],
        "kendall_tau_adaptive_at_25pct": quarter["tau"],
        "games_adaptive_at_25pct": int(quarter["games"]),
        "adaptive_minus_rr_at_25pct": quarter["vs_rr"],
        "adaptive_minus_rr_at_25pct_se": quarter["vs_rr_se"],
        **ceiling(table, int(quarter["games"])),
    }


def ceiling(table: dict[str, dict[str, float]], games: int) -> dict[str, float]:
    """The true-order schedule at ``games`` (when it ran): what any schedule that gives
    every bot the same games could reach there."""
    rows = [t for k, t in table.items() if k.startswith("true order") and t["games"] == games]
    if not rows:
        return {}
    return {
        "kendall_tau_true_order_at_25pct": rows[0]["tau"],
        "true_order_minus_rr_at_25pct": rows[0]["vs_rr"],
        "true_order_minus_rr_at_25pct_se": rows[0]["vs_rr_se"],
        "true_order_classes": rows[0]["classes"],
    }


def check_simulator(classes: int, seed: int) -> dict[str, float]:
    """The simulator against a known answer: a double round robin of three bots of
    ``CHECK_STRENGTHS``, its expected Kendall tau enumerated exactly and simulated."""
    exact = round_robin_tau_exact(CHECK_STRENGTHS)
    rng = np.random.default_rng([seed, 3])
    taus = []
    for _ in range(classes):
        c = Class.draw(3, rng)
        c.strength = np.array(CHECK_STRENGTHS)
        taus.append(run_round_robin(c)["round robin"]["tau"])
    mean, se = float(np.mean(taus)), float(np.std(taus, ddof=1) / math.sqrt(classes))
    print(
        f"Check: double round robin of 3 bots at {CHECK_STRENGTHS} Elo, expected Kendall "
        f"tau exactly {exact:.4f}, simulated {mean:.4f} ± {se:.4f} ({classes} classes; "
        f"{(mean - exact) / se:+.1f} standard errors)"
    )
    return {"check_tau_exact": exact, "check_tau_simulated": mean, "check_tau_se": se}


def play(
    work: list[tuple[int, int, int, bool]], jobs: int, save: Path | None
) -> list[dict[str, dict[str, float]]]:
    """Every class of ``work`` (those ``save`` holds already are read back, the others
    played and appended to it as they finish)."""
    done: dict[tuple[int, int, int], dict[str, dict[str, float]]] = {}
    if save is not None and save.exists():
        for line in save.read_text().splitlines():
            item = json.loads(line)
            done[tuple(item["key"])] = item["rows"]  # type: ignore[index]
    todo = [w for w in work if w[:3] not in done]
    if todo:
        with ProcessPoolExecutor(max(1, jobs)) as pool:
            for w, rows in zip(todo, pool.map(one_class, todo), strict=True):
                done[w[:3]] = rows
                if save is not None:
                    with save.open("a") as f:
                        f.write(json.dumps({"key": list(w[:3]), "rows": rows}) + "\n")
    return [done[w[:3]] for w in work if w[:3] in done]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="30,100,300")
    parser.add_argument("--classes", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="12 classes per size")
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--baseline-classes",
        type=int,
        default=50,
        help="above 100 bots, the classes that also run the neighbour schedule and the "
        "adaptive budgets beyond 25%% (default 50: they cost most)",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--save",
        metavar="FILE",
        help="append each class's figures to FILE as it finishes (JSON lines) and skip the "
        "classes FILE already holds: a long run can be stopped, resumed and summarised",
    )
    args = parser.parse_args(argv)
    classes = 12 if args.quick else args.classes
    sizes = [int(s) for s in args.sizes.split(",")]
    check = check_simulator(CHECK_CLASSES // 10 if args.quick else CHECK_CLASSES, args.seed)
    figures: dict[str, object] = {}
    for n in sizes:
        start = time.monotonic()
        extended = classes if n <= 100 else min(classes, args.baseline_classes)
        work = [(n, args.seed, k, k < extended) for k in range(classes)]
        runs = play(work, args.jobs, Path(args.save) if args.save else None)
        if not runs:
            continue
        table = summarise(runs)
        print_table(n, len(runs), table, time.monotonic() - start)
        figures = {"bots": n, "classes": len(runs), **verdict(table), **check}
    return finish(figures, args.json)


if __name__ == "__main__":
    sys.exit(main())
