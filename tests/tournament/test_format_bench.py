"""The format simulator of ``bench/formats.py`` on small cases with known answers."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


sim = _load("formats_sim")


def test_kendall_tau_and_spearman_rho_of_known_orders() -> None:
    """Same order: 1; reversed: -1; one adjacent swap among four: tau (5 - 1) / 6, rho
    1 - 6·2 / (4·15); a tie counts as neither (tau-b)."""
    x = [4.0, 3.0, 2.0, 1.0]
    assert sim.kendall_tau(x, x) == pytest.approx(1.0)
    assert sim.kendall_tau(x, x[::-1]) == pytest.approx(-1.0)
    swapped = np.array([4.0, 3.0, 1.0, 2.0])
    assert sim.kendall_tau(x, swapped) == pytest.approx(4 / 6)
    assert sim.spearman_rho(np.array(x), swapped) == pytest.approx(0.8)
    tied = [4.0, 3.0, 3.0, 1.0]
    assert sim.kendall_tau(x, tied) == pytest.approx(5 / np.sqrt(6 * 5))


def test_accuracy_of_a_perfect_and_of_a_wrong_top() -> None:
    """A perfect estimate: tau 1, top 1 and top 10 right, no rank error; swapping the two best
    loses the top 1 and the top 10's order but not its set."""
    true = np.arange(20, dtype=float)
    perfect = sim.accuracy(true, true * 3 + 1)
    assert perfect == {
        "tau": 1.0,
        "rho": pytest.approx(1.0),
        "top1": 1.0,
        "top10": 1.0,
        "top10_set": 1.0,
        "rank_error": 0.0,
    }
    est = true.copy()
    est[[19, 18]] = est[[18, 19]]
    wrong = sim.accuracy(true, est)
    assert (wrong["top1"], wrong["top10"], wrong["top10_set"]) == (0.0, 0.0, 1.0)
    assert wrong["rank_error"] == pytest.approx(2 / 20)


def test_game_outcomes_follow_the_elo_model_with_draws() -> None:
    """Between equals: 20% draws and a mean score of 1/2; 200 Elo stronger: a mean score of
    1 / (1 + 10^-0.5) = 0.760 (200,000 games, so within 0.005)."""
    rng = np.random.default_rng(3)
    even = sim.game_points(rng, np.zeros(200_000))
    assert np.mean(even == 0.5) == pytest.approx(0.2, abs=0.005)
    assert even.mean() == pytest.approx(0.5, abs=0.005)
    stronger = sim.game_points(rng, np.full(200_000, 200.0))
    assert stronger.mean() == pytest.approx(1 / (1 + 10**-0.5), abs=0.005)


def test_round_robin_plays_every_pair_once_each_way() -> None:
    """Six bots: 30 games, each ordered pair once, and the points of a pair's two games sum
    to at most 2."""
    c = sim.Class.draw(6, np.random.default_rng(1))
    row = sim.run_round_robin(c)["round robin"]
    assert row["games"] == 30
    off = ~np.eye(6, dtype=bool)
    assert np.all(c.games[off] == 1) and np.all(np.diag(c.games) == 0)
    assert np.all(c.points + c.points.T <= 2.0)
    assert -1.0 <= row["tau"] <= 1.0


def test_swiss_and_adaptive_rounds_give_every_bot_two_games_a_round() -> None:
    """Eight bots: after 3 Swiss rounds 24 games, each bot 6; after 5 adaptive rounds 40
    games, each bot 10; the rows are named by their rounds."""
    c = sim.Class.draw(8, np.random.default_rng(2))
    rows = sim.run_swiss(c, [2, 3])
    assert rows["swiss 3 rounds"]["games"] == 24 and rows["swiss 2 rounds"]["games"] == 16
    assert np.all((c.games + c.games.T).sum(axis=1) == 6)
    c = sim.Class.draw(8, np.random.default_rng(2))
    rows = sim.run_rated_rounds(c, sim.adaptive_pairs, "adaptive", [5])
    assert list(rows) == ["adaptive 5 rounds"] and rows["adaptive 5 rounds"]["games"] == 40
    assert np.all((c.games + c.games.T).sum(axis=1) == 10)


def test_a_long_adaptive_event_orders_a_wide_class_almost_perfectly() -> None:
    """Sixteen bots 200 Elo apart: after 15 adaptive rounds the order is nearly exact (a
    property of the whole loop: ratings, intervals, pairing, fit)."""
    c = sim.Class.draw(16, np.random.default_rng(4))
    c.strength = np.arange(16) * 200.0
    row = sim.run_rated_rounds(c, sim.adaptive_pairs, "adaptive", [15])["adaptive 15 rounds"]
    assert row["tau"] > 0.9


def test_exact_round_robin_tau_of_two_bots_by_formula() -> None:
    """Two bots, 100 Elo apart, a game pair: tau is +1 when the stronger scores more than 1
    of 2, -1 when less, 0 on a tie, so E[tau] = (w² + 2wd) - (l² + 2ld) with w, d, l the
    stronger's win, draw and loss chances."""
    e = 1 / (1 + 10 ** (-100 / 400))
    d = 0.2 * 4 * e * (1 - e)
    w, lose = e - d / 2, 1 - e - d / 2
    expected = (w**2 + 2 * w * d) - (lose**2 + 2 * lose * d)
    assert sim.round_robin_tau_exact([100.0, 0.0]) == pytest.approx(expected)
    assert sim.round_robin_tau_exact([0.0, 0.0]) == pytest.approx(0.0)


def test_simulated_round_robin_matches_the_exact_answer_for_three_bots() -> None:
    """Three bots at 150, 0 and -100 Elo: the simulator's mean Kendall tau of a double
    round robin (ranked by the maximum-likelihood fit) agrees with the enumerated exact
    expectation within four standard errors."""
    strengths = np.array([150.0, 0.0, -100.0])
    exact = sim.round_robin_tau_exact(strengths)
    rng = np.random.default_rng(5)
    taus = []
    for _ in range(1500):
        c = sim.Class.draw(3, rng)
        c.strength = strengths
        taus.append(sim.run_round_robin(c)["round robin"]["tau"])
    se = np.std(taus, ddof=1) / np.sqrt(len(taus))
    assert abs(np.mean(taus) - exact) < 4 * se
    assert 0.5 < exact < 0.8


def test_the_true_order_schedule_pairs_everyone_and_knows_the_order() -> None:
    """The ceiling schedule: every bot once a round, and over rounds it pairs close true
    strengths far more often than distant ones."""
    c = sim.Class.draw(40, np.random.default_rng(6))
    met = np.zeros((40, 40), dtype=np.int64)
    gaps = []
    for number in range(1, 6):
        pairs = sim.true_order_pairs(c, met, number)
        assert sorted(i for p in pairs for i in p) == list(range(40))
        for a, b in pairs:
            met[a, b] += 1
            met[b, a] += 1
            gaps.append(abs(c.strength[a] - c.strength[b]))
    random_gap = np.mean(np.abs(c.strength[:, None] - c.strength[None, :]))
    assert np.mean(gaps) < 0.6 * random_gap


def test_spearman_rho_of_an_all_tied_estimate_is_zero() -> None:
    """An estimate with every bot tied has no order: rho 0 (not NaN), tau 0."""
    true = np.array([3.0, 2.0, 1.0])
    assert sim.spearman_rho(true, np.zeros(3)) == 0.0
    assert sim.kendall_tau(true, np.zeros(3)) == 0.0
