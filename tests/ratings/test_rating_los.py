"""The likelihood-of-superiority matrix and the head-to-head LOS formula."""

from __future__ import annotations

import math

import numpy as np
import pytest

from referee.ratings.los import head_to_head_los, los_matrix
from referee.ratings.mle import fit_ratings
from referee.ratings.results import GameResult


def test_head_to_head_known_values() -> None:
    """Even records give 0.5; 10-0 gives Φ(√10) ≈ 0.99921; the formula is antisymmetric."""
    assert head_to_head_los(0, 0) == 0.5
    assert head_to_head_los(7, 7) == 0.5
    assert head_to_head_los(10, 0) == pytest.approx(0.999217, abs=1e-6)
    assert head_to_head_los(6, 4) + head_to_head_los(4, 6) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        head_to_head_los(-1, 0)


def test_matrix_is_complementary_and_follows_the_fit() -> None:
    """m[i,j] + m[j,i] = 1, the diagonal is NaN, and the value is Φ(gap / se(gap))."""
    games = [GameResult("a", "b", 1.0)] * 12 + [GameResult("b", "a", 1.0)] * 8
    games += [GameResult("b", "c", 0.5)] * 10 + [GameResult("c", "b", 1.0)] * 2
    fit = fit_ratings(games)
    m = los_matrix(fit)
    assert np.all(np.isnan(np.diag(m)))
    off = ~np.eye(3, dtype=bool)
    assert np.allclose((m + m.T)[off], 1.0)
    gap = fit.rating("a") - fit.rating("b")
    z = gap / fit.difference_stderr("a", "b")
    assert m[0, 1] == pytest.approx(0.5 * (1 + math.erf(z / math.sqrt(2))))
    assert 0.5 < m[0, 1] < 1.0


def test_equal_players_are_a_coin_flip() -> None:
    """Two players with identical records against each other have LOS 0.5."""
    games = [GameResult("a", "b", 1.0), GameResult("b", "a", 1.0)] * 5
    m = los_matrix(fit_ratings(games))
    assert m[0, 1] == pytest.approx(0.5)
