"""Gauntlet pairings: one bot against a field."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.tournament.pairing import expand, gauntlet


@settings(deadline=None)
@given(field_size=st.integers(1, 12), cycles=st.integers(1, 4))
def test_challenger_meets_each_field_bot_2n_times_and_field_never_meets(
    field_size: int, cycles: int
) -> None:
    """Every game has the challenger; each field bot plays it 2·cycles times, seats split
    evenly, and the challenger's first-seat share is exactly half."""
    field = [f"f{i}" for i in range(field_size)]
    rounds = gauntlet("champ", field, cycles)
    assert len(rounds) == cycles
    games = expand(rounds)
    assert all("champ" in (g.first, g.second) for g in games)
    opponents = Counter(g.second if g.first == "champ" else g.first for g in games)
    assert opponents == dict.fromkeys(field, 2 * cycles)
    firsts = Counter(g.first for g in games)
    assert firsts["champ"] == field_size * cycles
    for f in field:
        assert firsts[f] == cycles


def test_colour_alternates_along_the_field_and_across_cycles() -> None:
    """The challenger starts first, second, first... and the next cycle mirrors that."""
    one, two = gauntlet("c", ["a", "b", "d"], 2)
    assert [p.first == "c" for p in one.pairings] == [True, False, True]
    assert [p.first == "c" for p in two.pairings] == [False, True, False]


def test_challenger_in_field_is_refused() -> None:
    """A challenger cannot also be in its own field."""
    with pytest.raises(ValueError):
        gauntlet("a", ["a", "b"])
