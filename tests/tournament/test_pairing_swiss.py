"""Swiss (Dutch-style) pairings: score groups, no repeats while avoidable, byes, colours."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.tournament.pairing import (
    SEARCH_BUDGET,
    Pairing,
    Round,
    _greedy_matching,
    _max_matching,
    _perfect_matching,
    _repair,
    swiss_round,
)


def names(n: int) -> list[str]:
    return [f"p{i}" for i in range(1, n + 1)]


def perfect_without_repeats(players: Sequence[str], met: dict[str, set[str]]) -> bool:
    """Brute force (independent of the matching code): can ``players`` all be paired
    without anyone meeting an old opponent?"""
    if not players:
        return True
    if len(players) % 2:
        return False
    p, rest = players[0], players[1:]
    return any(
        q not in met[p] and perfect_without_repeats([x for x in rest if x != q], met) for q in rest
    )


def fewest_repeats(players: Sequence[str], met: dict[str, set[str]]) -> int:
    """Brute force: the least number of repeat pairs any complete pairing needs."""
    if not players:
        return 0
    p, rest = players[0], players[1:]
    return min((q in met[p]) + fewest_repeats([x for x in rest if x != q], met) for q in rest)


def state(players: list[str], history: list[Round]) -> tuple[dict[str, set[str]], Counter[str]]:
    met: dict[str, set[str]] = {p: set() for p in players}
    byes: Counter[str] = Counter()
    for r in history:
        byes.update(r.byes)
        for pr in r.pairings:
            met[pr.first].add(pr.second)
            met[pr.second].add(pr.first)
    return met, byes


@pytest.mark.parametrize("budget", [SEARCH_BUDGET, 0])
@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 10), extra_rounds=st.integers(0, 3), seed=st.integers(0, 10**6))
def test_swiss_tournament_properties(budget: int, n: int, extra_rounds: int, seed: int) -> None:
    """Over a whole simulated Swiss event, every round: each player exactly once; no
    repeat pairing when some pairing avoids it (and the fewest repeats otherwise); the bye
    goes to the lowest-ranked player who has had the fewest byes among those whose
    absence still allows a repeat-free round; the first seat goes to the player who has
    had it less often. Budget 0 runs the matching-guided search alone."""
    rng = random.Random(seed)
    players = names(n)
    scores = dict.fromkeys(players, 0.0)
    history: list[Round] = []
    for _ in range(n - 1 + extra_rounds):
        met, byes = state(players, history)
        balance: Counter[str] = Counter()
        for r in history:
            for pr in r.pairings:
                balance[pr.first] += 1
                balance[pr.second] -= 1
        rnd = swiss_round(players, scores, history, search_budget=budget)
        assert rnd.number == len(history) + 1
        seen = [p for pr in rnd.pairings for p in (pr.first, pr.second)] + list(rnd.byes)
        assert sorted(seen) == sorted(players)
        assert len(rnd.byes) == n % 2

        ranked = sorted(players, key=lambda p: (-scores[p], players.index(p)))
        options = [
            [p for p in ranked if p not in b] for b in ([[x] for x in ranked] if n % 2 else [[]])
        ]
        repeats = sum(pr.second in met[pr.first] for pr in rnd.pairings)
        if any(perfect_without_repeats(o, met) for o in options):
            assert repeats == 0
        rest = [p for p in ranked if p not in rnd.byes]
        assert repeats == fewest_repeats(rest, met)
        if n % 2:
            feasible = [
                b for b in ranked if perfect_without_repeats([p for p in ranked if p != b], met)
            ]
            pool = feasible or ranked
            fewest = min(byes[b] for b in pool)
            expected = [b for b in pool if byes[b] == fewest][-1]
            assert rnd.byes == (expected,)
        for pr in rnd.pairings:
            assert balance[pr.first] <= balance[pr.second]

        history.append(rnd)
        for pr in rnd.pairings:
            s = rng.choice([0.0, 1.0, 1.0, 2.0])
            scores[pr.first] += s
            scores[pr.second] += 2.0 - s
        for b in rnd.byes:
            scores[b] += 2.0


def test_round_one_is_top_half_against_bottom_half() -> None:
    """With everyone on zero, seed 1 meets seed 5, 2 meets 6, ... (8 players)."""
    rnd = swiss_round(names(8), {}, [])
    assert [p.players for p in rnd.pairings] == [
        frozenset(("p1", "p5")),
        frozenset(("p2", "p6")),
        frozenset(("p3", "p7")),
        frozenset(("p4", "p8")),
    ]
    assert [p.first for p in rnd.pairings] == ["p1", "p2", "p3", "p4"]
    assert rnd.byes == ()


def test_round_two_pairs_within_score_groups() -> None:
    """After the top half wins, the winners play each other (1v3, 2v4) and so do the
    losers (5v7, 6v8), with the colours swapped from round one."""
    players = names(8)
    first = swiss_round(players, {}, [])
    scores = {"p1": 2.0, "p2": 2.0, "p3": 2.0, "p4": 2.0}
    second = swiss_round(players, scores, [first])
    assert [p.players for p in second.pairings] == [
        frozenset(("p1", "p3")),
        frozenset(("p2", "p4")),
        frozenset(("p5", "p7")),
        frozenset(("p6", "p8")),
    ]
    assert second.pairings[0] == Pairing("p3", "p1")


def test_odd_group_floats_its_lowest_player_down() -> None:
    """A three-player top group pairs its top two halves and floats the third down to meet
    the top of the next group; the bye goes to the lowest-ranked player."""
    players = names(7)
    scores = {"p1": 2.0, "p2": 2.0, "p3": 2.0}
    rnd = swiss_round(players, scores, [])
    assert rnd.byes == ("p7",)
    assert [p.players for p in rnd.pairings][:2] == [
        frozenset(("p1", "p2")),
        frozenset(("p3", "p4")),
    ]


def test_repeat_avoided_by_backtracking() -> None:
    """When 1v3, 2v4 would repeat, the Dutch transposition of the lower half (1v4, 2v3)
    comes next."""
    players = names(4)
    history = [Round(1, (Pairing("p1", "p3"), Pairing("p2", "p4")))]
    scores = {"p1": 1.0, "p2": 1.0, "p3": 1.0, "p4": 1.0}
    rnd = swiss_round(players, scores, history)
    assert [p.players for p in rnd.pairings] == [frozenset(("p1", "p4")), frozenset(("p2", "p3"))]


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 10), data=st.data())
def test_max_matching_is_maximum(n: int, data: st.DataObject) -> None:
    """The matching (networkx) is as large as the brute-force maximum on random graphs."""
    players = names(n)
    pairs = list(combinations(players, 2))
    blocked = data.draw(st.lists(st.sampled_from(pairs), unique=True) if pairs else st.just([]))
    met: dict[str, set[str]] = {p: set() for p in players}
    for a, b in blocked:
        met[a].add(b)
        met[b].add(a)
    match = _max_matching(players, met)
    assert all(match[match[p]] == p and match[p] not in met[p] for p in match)

    def best(rest: list[str]) -> int:
        if len(rest) < 2:
            return 0
        p, others = rest[0], rest[1:]
        skip = best(others)
        take = max(
            (1 + best([x for x in others if x != q]) for q in others if q not in met[p]),
            default=0,
        )
        return max(skip, take)

    assert len(match) // 2 == best(players)


def _random_met(n: int, data: st.DataObject) -> tuple[list[str], dict[str, set[str]]]:
    players = names(n)
    pairs = list(combinations(players, 2))
    blocked = data.draw(st.lists(st.sampled_from(pairs), unique=True) if pairs else st.just([]))
    met: dict[str, set[str]] = {p: set() for p in players}
    for a, b in blocked:
        met[a].add(b)
        met[b].add(a)
    return players, met


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 10), data=st.data())
def test_perfect_matching_agrees_with_brute_force(n: int, data: st.DataObject) -> None:
    """The repeat-free check (greedy shortcut, then the exact matching) finds a pairing
    exactly when brute force does, and what it returns is a valid repeat-free pairing."""
    players, met = _random_met(n, data)
    found = _perfect_matching(players, met)
    assert (found is not None) == perfect_without_repeats(players, met)
    if found is not None:
        assert sorted(found) == sorted(players)
        assert all(found[found[p]] == p and found[p] not in met[p] for p in found)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(0, 10), data=st.data())
def test_greedy_matching_is_a_valid_matching(n: int, data: st.DataObject) -> None:
    """The greedy shortcut only ever pairs players who have not met, each at most once."""
    players, met = _random_met(n, data)
    mate = _greedy_matching(players, met)
    assert all(mate[mate[p]] == p and mate[p] != p and mate[p] not in met[p] for p in mate)


def test_greedy_can_fall_short_where_a_matching_exists() -> None:
    """A case the greedy pass alone gets wrong, so the exact matching must answer it."""
    players = names(6)
    # Round 1 was p1-p2, p3-p4, p5-p6: the greedy pass pairs p1-p3 and p2-p4, leaving p5 and
    # p6, who have met; a repeat-free round exists (e.g. p1-p3, p2-p5, p4-p6).
    met: dict[str, set[str]] = {p: set() for p in players}
    for a, b in (("p1", "p2"), ("p3", "p4"), ("p5", "p6")):
        met[a].add(b)
        met[b].add(a)
    assert len(_greedy_matching(players, met)) < 6
    found = _perfect_matching(players, met)
    assert found is not None and all(found[p] not in met[p] for p in players)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(0, 10), data=st.data())
def test_repair_keeps_a_valid_matching(n: int, data: st.DataObject) -> None:
    """Mending the greedy matching only pairs players who have not met, each once, and
    never drops a pair it was given."""
    players, met = _random_met(n, data)
    mate = _greedy_matching(players, met)
    before = len(mate)
    _repair(mate, [p for p in players if p not in mate], met)
    assert len(mate) >= before
    assert all(mate[mate[p]] == p and mate[p] != p and mate[p] not in met[p] for p in mate)


def test_repair_swaps_through_a_matched_pair() -> None:
    """Two free players who have met are both placed by re-pairing one matched pair."""
    met: dict[str, set[str]] = {p: set() for p in ("a", "b", "c", "d")}
    met["a"].add("b")
    met["b"].add("a")
    mate = {"c": "d", "d": "c"}
    _repair(mate, ["a", "b"], met)
    assert sorted(mate) == ["a", "b", "c", "d"]
    assert mate["a"] in ("c", "d") and mate["b"] in ("c", "d")
