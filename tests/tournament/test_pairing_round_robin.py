"""Round-robin pairings by the circle method: every pair, balanced colours, byes."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.tournament.pairing import Pairing, Round, expand, round_robin


def names(n: int) -> list[str]:
    return [f"bot{i}" for i in range(n)]


@settings(deadline=None)
@given(n=st.integers(2, 14), cycles=st.integers(1, 3))
def test_every_pair_meets_2n_times_with_seats_balanced(n: int, cycles: int) -> None:
    """Each pair meets in ``cycles`` pairings = 2·cycles games, each side first in half."""
    players = names(n)
    games = expand(round_robin(players, cycles))
    meetings = Counter(frozenset((g.first, g.second)) for g in games)
    assert set(meetings) == {frozenset(c) for c in combinations(players, 2)}
    assert set(meetings.values()) == {2 * cycles}
    firsts = Counter((g.first, g.second) for g in games)
    assert all(firsts[(a, b)] == cycles for a, b in combinations(players, 2))
    assert all(firsts[(b, a)] == cycles for a, b in combinations(players, 2))


@settings(deadline=None)
@given(n=st.integers(2, 14), cycles=st.integers(1, 3))
def test_rounds_everyone_once_and_byes_fair(n: int, cycles: int) -> None:
    """Each round has everyone exactly once (paired or bye); with an odd count each player
    sits out exactly once per cycle."""
    players = names(n)
    rounds = round_robin(players, cycles)
    assert len(rounds) == cycles * (n - 1 if n % 2 == 0 else n)
    assert [r.number for r in rounds] == list(range(1, len(rounds) + 1))
    byes: Counter[str] = Counter()
    for r in rounds:
        seen = [p for pr in r.pairings for p in (pr.first, pr.second)] + list(r.byes)
        assert sorted(seen) == sorted(players)
        assert len(r.byes) == n % 2
        byes.update(r.byes)
    assert all(byes[p] == (cycles if n % 2 else 0) for p in players)


@settings(deadline=None)
@given(n=st.integers(2, 14))
def test_colours_alternate_within_a_cycle(n: int) -> None:
    """Within a cycle nobody has the first seat of a pair more than once more often than
    the second, nor three rounds running; the next cycle swaps every colour."""
    players = names(n)
    rounds = round_robin(players, 2)
    per_cycle = len(rounds) // 2
    for p in players:
        seq = [
            pr.first == p
            for r in rounds[:per_cycle]
            for pr in r.pairings
            if p in (pr.first, pr.second)
        ]
        assert abs(2 * sum(seq) - len(seq)) <= 1
        assert all(not (a == b == c) for a, b, c in zip(seq, seq[1:], seq[2:], strict=False))
    for first, second in zip(rounds[:per_cycle], rounds[per_cycle:], strict=True):
        assert [Pairing(p.second, p.first) for p in first.pairings] == list(second.pairings)


def test_small_cases_and_errors() -> None:
    """One player has no rounds; two play one pairing; bad input is refused."""
    assert round_robin(["a"]) == []
    assert round_robin(["a", "b"]) == [Round(1, (Pairing("a", "b"),))]
    with pytest.raises(ValueError):
        round_robin(["a", "a"])
    with pytest.raises(ValueError):
        round_robin(["a", "b"], cycles=0)


def test_expand_gives_each_pairing_two_legs_with_sides_swapped() -> None:
    """A pairing becomes legs 1 and 2; (round, board, leg) is unique."""
    games = expand(round_robin(names(4)))
    assert len(games) == 12
    assert len({(g.round, g.board, g.leg) for g in games}) == 12
    for one, two in zip(games[0::2], games[1::2], strict=True):
        assert (one.leg, two.leg) == (1, 2)
        assert (one.first, one.second) == (two.second, two.first)
        assert (one.round, one.board) == (two.round, two.board)
