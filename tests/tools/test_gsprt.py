"""The GSPRT on pentanomial pairs: known answers, agreement with the normal approximation,
the stopping rule and the Elo estimate."""

from __future__ import annotations

import math
import random

import pytest

from referee.analysis.sprt import (
    Decision,
    Sprt,
    bounds,
    elo_estimate,
    elo_to_score,
    llr,
    llr_normal_approx,
    pair_outcome,
    score_to_elo,
)


def test_wald_bounds_known_values() -> None:
    """alpha = beta = 0.05 gives bounds of -/+ ln(19) = 2.944; 0.05/0.1 are asymmetric."""
    lower, upper = bounds(0.05, 0.05)
    assert lower == pytest.approx(-math.log(19)) and upper == pytest.approx(math.log(19))
    assert upper == pytest.approx(2.944438979)
    lower, upper = bounds(0.05, 0.10)
    assert lower == pytest.approx(math.log(0.10 / 0.95))
    assert upper == pytest.approx(math.log(0.90 / 0.05))


def test_two_outcome_counts_reduce_to_the_binomial_sprt() -> None:
    """With only 0-2 and 2-0 pairs the constrained maximum is the two-point distribution, so
    the LLR is the binomial one: n1 ln(s1/s0) + n0 ln((1-s1)/(1-s0))."""
    s0, s1 = elo_to_score(0), elo_to_score(20)
    expected = 50 * math.log(s1 / s0) + 30 * math.log((1 - s1) / (1 - s0))
    assert llr([30, 0, 0, 0, 50], 0, 20) == pytest.approx(expected, rel=1e-3)
    assert llr([30, 0, 0, 0, 50], 0, 20) == pytest.approx(1.01882, abs=1e-3)


def test_full_pentanomial_known_value_and_normal_approximation() -> None:
    """A known answer for all five bins (0.51813 for 10/20/40/25/15 pairs on [0, 10]), within
    2% of the normal approximation, and zero with no pairs."""
    counts = [10, 20, 40, 25, 15]
    assert llr(counts, 0, 10) == pytest.approx(0.518128, abs=1e-4)
    assert llr(counts, 0, 10) == pytest.approx(llr_normal_approx(counts, 0, 10), rel=0.02)
    assert llr([0, 0, 0, 0, 0], 0, 10) == 0.0


def test_llr_is_antisymmetric_under_mirroring() -> None:
    """Mirroring the counts and the hypotheses (elo -> -elo) negates nothing but the labels:
    the LLR of [a..e] on [e0, e1] equals that of [e..a] on [-e1, -e0] with the sign flipped."""
    counts = [3, 11, 25, 17, 9]
    assert llr(counts, 0, 15) == pytest.approx(-llr(counts[::-1], -15, 0), abs=1e-9)


def test_constrained_fit_matches_the_hypothesis_mean() -> None:
    """Strong data for NEW gives a positive LLR; weak data a negative one; even data at the
    midpoint of the hypotheses is near zero."""
    assert llr([1, 5, 20, 30, 20], 0, 10) > 2
    assert llr([20, 30, 20, 5, 1], 0, 10) < -2
    mid = elo_to_score(5)
    assert abs(llr([10, 20, 40, 20, 10], -5, 5)) < 1e-6 and mid > 0.5


def test_pair_outcomes_and_bad_points() -> None:
    """Pair points map to the five bins; anything else is refused."""
    assert [pair_outcome(p) for p in (0, 0.5, 1, 1.5, 2)] == [0, 1, 2, 3, 4]
    for bad in (-0.5, 2.5, 0.3):
        with pytest.raises(ValueError):
            pair_outcome(bad)


def test_elo_estimate_and_interval() -> None:
    """The mean pair score maps to logistic Elo; the interval contains it; 75% is +190.8."""
    est = elo_estimate([0, 0, 10, 0, 10])
    assert est.score == pytest.approx(0.75)
    assert est.elo == pytest.approx(score_to_elo(0.75)) == pytest.approx(190.85, abs=0.01)
    assert est.low < est.elo < est.high


@pytest.mark.parametrize(("true_elo", "expected"), [(60.0, Decision.H1), (-30.0, Decision.H0)])
def test_sprt_decides_on_simulated_pairs(true_elo: float, expected: Decision) -> None:
    """Pairs drawn from a bot 60 Elo stronger accept H1 on [0, 20]; 30 Elo weaker, H0; the
    sentence names the decision."""
    rng = random.Random(5)
    p = elo_to_score(true_elo)
    test = Sprt(0, 20)
    while test.decision is Decision.CONTINUE and test.pairs < 5000:
        points = sum(1.0 if rng.random() < p else 0.0 for _ in range(2))
        test.add_pair(points)
    assert test.decision is expected
    assert test.sentence("new", "base").startswith(f"{expected.value} accepted")
    assert "pairs" in test.status()
