"""The maximum-likelihood (Bradley–Terry) fit: known answers, invariances, intervals."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest

from referee.ratings.mle import ELO_PER_NAT, Z95, fit_ratings, tally
from referee.ratings.results import GameResult

EXACT_75 = 400.0 * math.log10(3.0)  # 190.85 Elo: odds of 3 to 1


def simulate_round_robin(
    true_elo: np.ndarray,
    rng: np.random.Generator,
    pairs_per_couple: int = 1,
    draw_share: float = 0.0,
    seat_advantage: float = 0.0,
) -> list[GameResult]:
    """Every couple plays ``pairs_per_couple`` game pairs (sides swapped).

    The first seat's expected score is the logistic model's; ``draw_share`` of the smaller of
    the win/loss probabilities becomes draws on each side, which keeps that expectation.
    """
    n = len(true_elo)
    out: list[GameResult] = []
    for i in range(n):
        for j in range(i + 1, n):
            for _ in range(pairs_per_couple):
                for a, b in ((i, j), (j, i)):
                    diff = true_elo[a] - true_elo[b] + seat_advantage
                    p = 1.0 / (1.0 + 10.0 ** (-diff / 400.0))
                    draw = 2.0 * draw_share * min(p, 1.0 - p)
                    win = p - draw / 2.0
                    u = rng.random()
                    score = 1.0 if u < win else (0.5 if u < win + draw else 0.0)
                    out.append(GameResult(f"bot{a}", f"bot{b}", score))
    return out


def games(a: str, b: str, wins: int, draws: int, losses: int) -> list[GameResult]:
    """a's record against b, alternating seats."""
    out: list[GameResult] = []
    for k, s in enumerate([1.0] * wins + [0.5] * draws + [0.0] * losses):
        out.append(GameResult(a, b, s) if k % 2 == 0 else GameResult(b, a, 1.0 - s))
    return out


def test_75_percent_is_191_elo_apart() -> None:
    """Without a prior, scoring 75% against one opponent is 400·log10(3) ≈ 190.85 Elo."""
    fit = fit_ratings(games("a", "b", 30, 0, 10), prior_games=0)
    assert fit.rating("a") - fit.rating("b") == pytest.approx(EXACT_75, abs=1e-6)
    assert fit.rating("a") + fit.rating("b") == pytest.approx(3000.0)


def test_draws_count_as_half_points() -> None:
    """20 wins, 20 draws, 0 losses is 75% too, so it is the same 190.85 gap."""
    fit = fit_ratings(games("a", "b", 20, 20, 0), prior_games=0)
    assert fit.rating("a") - fit.rating("b") == pytest.approx(EXACT_75, abs=1e-6)


def test_gaps_add_along_a_chain() -> None:
    """a 75% vs b and b 75% vs c (a and c never met) puts a 2 x 190.85 above c."""
    data = games("a", "b", 30, 0, 10) + games("b", "c", 30, 0, 10)
    fit = fit_ratings(data, prior_games=0)
    assert fit.rating("a") - fit.rating("c") == pytest.approx(2 * EXACT_75, abs=1e-6)
    assert fit.rating("b") == pytest.approx(1500.0, abs=1e-6)


def test_interval_is_the_binomial_one() -> None:
    """With n games at 75% the gap's standard error is 1/sqrt(n·p·(1-p)) in log-odds units;
    with the average anchored each rating carries half of it."""
    fit = fit_ratings(games("a", "b", 30, 0, 10), prior_games=0)
    se_gap = ELO_PER_NAT / math.sqrt(40 * 0.75 * 0.25)
    assert fit.difference_stderr("a", "b") == pytest.approx(se_gap, rel=1e-6)
    assert fit.ci95("a") == pytest.approx(Z95 * se_gap / 2, rel=1e-6)


def test_prior_shrinks_a_little_and_keeps_perfect_scores_finite() -> None:
    """The default prior (one virtual draw per player) makes a 40-game 30-10 record count
    as 30.5-10.5, and a 10-0 record gets a finite rating and interval."""
    fit = fit_ratings(games("a", "b", 30, 0, 10))
    assert fit.rating("a") - fit.rating("b") == pytest.approx(400 * math.log10(30.5 / 10.5))
    perfect = fit_ratings(games("a", "b", 10, 0, 0))
    assert math.isfinite(perfect.rating("a")) and perfect.rating("a") > 1700
    assert math.isfinite(perfect.ci95("a"))


def test_anchor_named_player_and_average() -> None:
    """The mean anchor centres the average; a named anchor sits at its rating with no
    interval; gaps and their errors do not depend on the anchor."""
    data = games("a", "b", 30, 0, 10) + games("b", "c", 12, 6, 2)
    mean = fit_ratings(data)
    named = fit_ratings(data, anchor="c", anchor_rating=2000.0)
    assert float(np.mean(mean.ratings)) == pytest.approx(1500.0)
    assert named.rating("c") == 2000.0
    assert named.ci95("c") == 0.0
    assert named.rating("a") - named.rating("b") == pytest.approx(
        mean.rating("a") - mean.rating("b")
    )
    assert named.difference_stderr("a", "b") == pytest.approx(mean.difference_stderr("a", "b"))
    assert "c = 2000" in named.anchor_description
    with pytest.raises(KeyError):
        fit_ratings(data, anchor="nobody")


def test_game_order_does_not_matter() -> None:
    """Shuffling the games (and the order players are first seen) gives the same fit."""
    rng = np.random.default_rng(7)
    data = simulate_round_robin(rng.normal(0, 150, 8), rng, pairs_per_couple=2, draw_share=0.3)
    base = fit_ratings(data).as_dict()
    shuffled = list(data)
    random.Random(3).shuffle(shuffled)
    again = fit_ratings(shuffled).as_dict()
    assert again.keys() == base.keys()
    for p, r in base.items():
        assert again[p] == pytest.approx(r, abs=1e-8)


def test_matches_plain_gradient_ascent() -> None:
    """Newton on the tallied matrices lands where slow per-game gradient ascent does, with
    the virtual draws written out pair by pair."""
    rng = np.random.default_rng(11)
    data = simulate_round_robin(rng.normal(0, 200, 5), rng, pairs_per_couple=3, draw_share=0.2)
    fit = fit_ratings(data, prior_games=1.0)
    names = list(fit.players)
    played = Counter(p for g in data for p in (g.first, g.second))
    met = Counter(frozenset((g.first, g.second)) for g in data)
    virtual = {tuple(sorted(c)): 0.5 * n * sum(1 / played[p] for p in c) for c, n in met.items()}
    theta = dict.fromkeys(names, 0.0)
    for _ in range(4000):
        grad = dict.fromkeys(names, 0.0)
        for g in data:
            expect = 1 / (1 + math.exp(theta[g.second] - theta[g.first]))
            grad[g.first] += g.score - expect
            grad[g.second] -= g.score - expect
        for (a, b), v in virtual.items():
            expect = 1 / (1 + math.exp(theta[b] - theta[a]))
            grad[a] += v * (0.5 - expect)
            grad[b] -= v * (0.5 - expect)
        for p in names:
            theta[p] += 0.02 * grad[p]
    mean = sum(theta.values()) / len(theta)
    for p in names:
        assert fit.rating(p) == pytest.approx(1500 + (theta[p] - mean) * ELO_PER_NAT, abs=1e-3)


def test_voided_games_and_players_without_games() -> None:
    """Voided forfeits are left out; a listed player without games gets NaN and is left out
    of the average the anchor fixes."""
    data = [
        *games("a", "b", 30, 0, 10),
        GameResult("a", "b", 0.0, "time", forfeit=True, void=True),
    ]
    t = tally(data, players=["a", "b", "c"])
    assert t.total_games == 40
    fit = fit_ratings(data, players=["a", "b", "c"], prior_games=0)
    assert math.isnan(fit.rating("c"))
    assert fit.rating("a") == pytest.approx(1500 + EXACT_75 / 2)
    assert fit.connected
    with pytest.raises(ValueError):
        tally(data, players=["a"])
    with pytest.raises(ValueError):
        fit_ratings(data, players=["a", "b", "c"], anchor="c")


def test_separate_groups_are_flagged() -> None:
    """Two groups that never met: the fit says it is not connected, and each group's
    internal gap is still right."""
    data = games("a", "b", 30, 0, 10) + games("c", "d", 20, 20, 0)
    fit = fit_ratings(data, prior_games=0)
    assert not fit.connected
    assert fit.rating("a") - fit.rating("b") == pytest.approx(EXACT_75, abs=1e-6)
    assert fit.rating("c") - fit.rating("d") == pytest.approx(EXACT_75, abs=1e-6)


def test_chain_schedule_is_not_squeezed() -> None:
    """When bots only meet near neighbours in strength (a long chain), the virtual draws
    shrink the spread by a few percent only (a prior centred on a fixed rating would
    squeeze such a chain hard), and the intervals keep their coverage."""
    rng = np.random.default_rng(3)
    true = np.sort(rng.normal(0.0, 300.0, 40))
    data: list[GameResult] = []
    for i in range(len(true)):
        for j in range(i + 1, min(i + 3, len(true))):
            for _ in range(6):
                for a, b in ((i, j), (j, i)):
                    p = 1.0 / (1.0 + 10.0 ** ((true[b] - true[a]) / 400.0))
                    data.append(GameResult(f"bot{a}", f"bot{b}", float(rng.random() < p)))
    fit = fit_ratings(data)
    fitted = np.array([fit.rating(f"bot{k}") for k in range(len(true))])
    pure = fit_ratings(data, prior_games=0)
    assert pure.iterations < 20  # no perfect record here, so the pure fit exists
    unshrunk = np.array([pure.rating(f"bot{k}") for k in range(len(true))])
    assert 0.95 < np.std(fitted) / np.std(unshrunk) < 1.0
    centred = true - true.mean() + 1500.0
    ci = np.array([fit.ci95(f"bot{k}") for k in range(len(true))])
    assert np.mean(np.abs(fitted - centred) <= ci) >= 0.85


def test_seat_advantage_is_recovered() -> None:
    """A simulated 120-Elo first-seat edge is found within its interval; ignoring it
    squeezes the ratings together (the fit with it is more spread out)."""
    rng = np.random.default_rng(5)
    data = simulate_round_robin(
        rng.normal(0, 150, 10), rng, pairs_per_couple=10, seat_advantage=120.0
    )
    fit = fit_ratings(data, seat_advantage=True)
    assert fit.seat_advantage is not None and fit.seat_advantage_stderr is not None
    assert abs(fit.seat_advantage - 120.0) < Z95 * fit.seat_advantage_stderr
    plain = fit_ratings(data)
    assert plain.seat_advantage is None
    assert np.std(fit.ratings) > np.std(plain.ratings)


def test_true_strengths_fall_in_the_intervals_at_the_stated_rate() -> None:
    """Simulated bots with known strengths: about 95% of the true (average-anchored) values
    fall in the fitted 95% intervals, and the errors have no systematic bias."""
    rng = np.random.default_rng(2026)
    inside = total = 0
    errors: list[float] = []
    for _ in range(12):
        true = rng.normal(0.0, 200.0, 16)
        data = simulate_round_robin(true, rng, pairs_per_couple=2, draw_share=0.15)
        fit = fit_ratings(data)
        centred = true - true.mean() + 1500.0
        for k in range(len(true)):
            err = fit.rating(f"bot{k}") - centred[k]
            errors.append(err)
            inside += abs(err) <= fit.ci95(f"bot{k}")
            total += 1
    coverage = inside / total
    assert 0.89 <= coverage <= 0.995, coverage
    se_mean = float(np.std(errors)) / math.sqrt(len(errors))
    assert abs(float(np.mean(errors))) < 4 * se_mean + 1.0


def test_gap_intervals_cover_true_gaps() -> None:
    """The same holds for gaps to a named anchor bot (intervals from the full covariance)."""
    rng = np.random.default_rng(99)
    inside = total = 0
    for _ in range(12):
        true = rng.normal(0.0, 250.0, 12)
        fit = fit_ratings(simulate_round_robin(true, rng, 3), anchor="bot0", anchor_rating=0.0)
        for k in range(1, len(true)):
            inside += abs(fit.rating(f"bot{k}") - (true[k] - true[0])) <= fit.ci95(f"bot{k}")
            total += 1
    assert 0.89 <= inside / total <= 0.995, inside / total
