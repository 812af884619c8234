"""Known answers for the incremental K-factor Elo."""

from __future__ import annotations

import pytest

from referee.ratings.elo import expected_score, incremental_elo, update
from referee.ratings.results import GameResult


def test_equal_ratings_expect_half() -> None:
    """Equal ratings give an expected score of exactly 0.5."""
    assert expected_score(1500, 1500) == 0.5


def test_two_hundred_points_expect_about_076() -> None:
    """A 200-point edge gives 1/(1+10^-0.5) ≈ 0.7597, and the two sides sum to 1."""
    assert expected_score(1700, 1500) == pytest.approx(0.759746926, abs=1e-9)
    assert expected_score(1700, 1500) + expected_score(1500, 1700) == pytest.approx(1.0)


def test_four_hundred_points_is_ten_to_one() -> None:
    """400 points is odds of 10 to 1 (the definition of the scale)."""
    e = expected_score(1900, 1500)
    assert e / (1 - e) == pytest.approx(10.0)


def test_k32_win_from_equal_gains_16() -> None:
    """K=32, 1500 beats 1500: 1516 and 1484."""
    assert update(1500, 1500, 1.0, k=32) == (1516.0, 1484.0)


def test_k32_draw_between_equals_changes_nothing_and_upset_gains_more() -> None:
    """A draw between equals moves nobody; beating a 200-point favourite earns 32*0.76."""
    assert update(1500, 1500, 0.5) == (1500.0, 1500.0)
    a, b = update(1500, 1700, 1.0, k=32)
    assert a == pytest.approx(1500 + 32 * 0.759746926, abs=1e-6)
    assert a + b == pytest.approx(3200.0)


def test_incremental_replays_in_order_and_skips_voided_games() -> None:
    """The replay is order dependent, zero-sum, and a voided forfeit changes no rating."""
    games = [GameResult("a", "b", 1.0), GameResult("b", "a", 1.0)]
    forward = incremental_elo(games)
    backward = incremental_elo(list(reversed(games)))
    assert forward["a"] == pytest.approx(1516 - 32 * expected_score(1516, 1484))
    assert forward["a"] != backward["a"]
    assert sum(forward.values()) == pytest.approx(3000.0)
    voided = incremental_elo([GameResult("a", "c", 0.0, "time", forfeit=True, void=True)])
    assert voided == {"a": 1500.0, "c": 1500.0}
