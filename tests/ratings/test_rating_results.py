"""The GameResult record: validation and the derived winner/loser/forfeiter."""

from __future__ import annotations

import pytest

from referee.ratings.results import GameResult, total_scores


def test_rejects_bad_scores_and_self_play() -> None:
    """Scores other than 0/0.5/1, self-play, drawn forfeits and voided non-forfeits fail."""
    with pytest.raises(ValueError):
        GameResult("a", "b", 0.7)
    with pytest.raises(ValueError):
        GameResult("a", "a", 1.0)
    with pytest.raises(ValueError):
        GameResult("a", "b", 0.5, "time", forfeit=True)
    with pytest.raises(ValueError):
        GameResult("a", "b", 1.0, void=True)


def test_from_winner_maps_seats() -> None:
    """Seat 0 winning is 1, seat 1 winning is 0, no winner is a draw."""
    assert GameResult.from_winner("a", "b", 0).score == 1.0
    assert GameResult.from_winner("a", "b", 1).score == 0.0
    assert GameResult.from_winner("a", "b", None).score == 0.5
    with pytest.raises(ValueError):
        GameResult.from_winner("a", "b", 2)


def test_forfeiter_is_the_loser_of_a_forfeit() -> None:
    """A forfeit names its loser as forfeiter; a normal game has none."""
    g = GameResult("a", "b", 1.0, "time", forfeit=True)
    assert (g.winner, g.loser, g.forfeiter) == ("a", "b", "b")
    assert GameResult("a", "b", 0.0).forfeiter is None
    assert GameResult("a", "b", 0.5).winner is None
    assert g.score_of("b") == 0.0


def test_total_scores_skip_voided_games() -> None:
    """Points add up per player, and a voided game adds nothing."""
    games = [
        GameResult("a", "b", 1.0),
        GameResult("b", "a", 0.5),
        GameResult("a", "c", 0.0, "crash", forfeit=True, void=True),
    ]
    assert total_scores(games) == {"a": 1.5, "b": 0.5, "c": 0.0}
