"""The one rule for a tournament game that keeps aborting (referee.tournament.aborts)."""

from __future__ import annotations

from referee.tournament.aborts import MAX_ATTEMPTS, gives_up


def test_a_game_is_given_up_at_its_last_attempt() -> None:
    """Attempts before the last are played again; the last (and any later) gives the slot up."""
    assert [gives_up(a) for a in range(1, MAX_ATTEMPTS + 2)] == [False] * (MAX_ATTEMPTS - 1) + [
        True,
        True,
    ]
    assert gives_up(2, max_attempts=2) and not gives_up(1, max_attempts=2)


def test_at_least_one_attempt_is_made() -> None:
    """A limit below one still plays the game once before giving it up."""
    assert gives_up(1, max_attempts=0)
