"""The adaptive format's pairing (pure): every bot once a round, colours, repeats, the value
of a pairing, the stopping rule, and the games a format plans."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.storage import TournamentFormat
from referee.tournament.adaptive import (
    adaptive_round,
    adjacent_confidence,
    match_by_value,
    order_settled,
    pairing_values,
)
from referee.tournament.pairing import Pairing, Round
from referee.tournament.plan import DEFAULT_CPU_PER_BOT_S, START_CPU_S, Plan, cpu_per_bot
from referee.tournament.schedule import planned_games


def names(n: int) -> list[str]:
    return [f"b{i}" for i in range(n)]


def independent(sd_elo: float, n: int) -> np.ndarray:
    return np.eye(n) * sd_elo**2


def test_value_is_highest_for_uncertain_neighbours() -> None:
    """Two close bots with wide intervals are worth more than a close pair whose order is
    already sure, or than two bots far apart."""
    ratings = np.array([0.0, 20.0, 400.0, 1000.0, 1010.0])
    cov = np.diag([80.0**2, 80.0**2, 80.0**2, 5.0**2, 5.0**2])
    v = pairing_values(ratings, cov)
    assert np.allclose(v, v.T) and np.all(np.diag(v) == 0)
    assert v[0, 1] > v[3, 4]  # same gap, but 3-4 is settled (small intervals)
    assert v[0, 1] > v[0, 2]  # same uncertainty, but 0-2 is far apart


def test_adjacent_confidence_and_stopping_rule_on_known_numbers() -> None:
    """Bots 100 Elo apart, each rating ±50 Elo (sd), independent: the upper is stronger with
    probability Φ(100 / √5000) = 0.9214; settled at 90%, open at 95%."""
    ratings = np.array([0.0, 100.0])
    cov = independent(50.0, 2)
    (p,) = adjacent_confidence(ratings, cov)
    assert p == pytest.approx(0.5 * (1 + math.erf(100 / math.sqrt(5000) / math.sqrt(2))))
    assert p == pytest.approx(0.9214, abs=1e-4)
    assert order_settled(ratings, cov, 0.90)
    assert not order_settled(ratings, cov, 0.95)
    # A bot without games (NaN) leaves its order open.
    assert not order_settled(np.array([0.0, 500.0, np.nan]), independent(1.0, 3), 0.9)


def test_match_by_value_takes_the_heavy_pairs_and_pairs_everyone() -> None:
    """With one clearly best perfect matching, it is found; every index appears once."""
    w = np.full((6, 6), 0.1)
    for a, b in ((0, 3), (1, 4), (2, 5)):
        w[a, b] = w[b, a] = 1.0
    pairs = match_by_value(w, np.zeros((6, 6), dtype=np.int64))
    assert sorted(tuple(sorted(p)) for p in pairs) == [(0, 3), (1, 4), (2, 5)]
    with pytest.raises(ValueError):
        match_by_value(np.zeros((3, 3)), np.zeros((3, 3), dtype=np.int64))


def test_two_opt_mends_what_greedy_leaves() -> None:
    """Greedy takes the single heaviest pair 1-2 and is left with 0-3 (worth nothing); the
    swap to 0-1 and 2-3 raises the total, so that is the answer."""
    w = np.zeros((4, 4))
    for (a, b), value in {(1, 2): 1.0, (0, 1): 0.9, (2, 3): 0.9}.items():
        w[a, b] = w[b, a] = value
    pairs = match_by_value(w, np.zeros((4, 4), dtype=np.int64))
    assert sorted(tuple(sorted(p)) for p in pairs) == [(0, 1), (2, 3)]


def test_no_repeat_while_a_fresh_opponent_is_as_good() -> None:
    """Four equal bots: after 0-1 and 2-3 have met, the next round pairs fresh opponents."""
    players = names(4)
    history = [Round(1, (Pairing("b0", "b1"), Pairing("b2", "b3")))]
    ratings = np.zeros(4)
    rnd = adaptive_round(players, ratings, independent(60.0, 4), history)
    met = {frozenset(p.players) for p in rnd.pairings}
    assert met.isdisjoint({frozenset(("b0", "b1")), frozenset(("b2", "b3"))})


def test_a_pair_meets_again_when_nothing_better_is_left() -> None:
    """Two bots whose order is open and a third far below them: the two meet again rather
    than both playing the settled bot (which only one of them can)."""
    players = names(4)
    history = [Round(1, (Pairing("b0", "b1"), Pairing("b2", "b3")))]
    ratings = np.array([0.0, 5.0, 1500.0, 3000.0])
    cov = np.diag([100.0**2, 100.0**2, 10.0**2, 10.0**2])
    rnd = adaptive_round(players, ratings, cov, history)
    assert frozenset(("b0", "b1")) in {p.players for p in rnd.pairings}


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 13), rounds=st.integers(1, 8), seed=st.integers(0, 10**6))
def test_every_round_pairs_everyone_with_fair_byes_and_balanced_colours(
    n: int, rounds: int, seed: int
) -> None:
    """Over a simulated event with random ratings and intervals: each bot plays exactly once
    a round (an odd count: one bye, never a second bye while someone has none); every bot has
    each seat equally often (each pairing is a game pair, sides swapped), and the first game
    of a pair starts with the bot that has opened fewer pairs."""
    rng = np.random.default_rng(seed)
    players = names(n)
    history: list[Round] = []
    byes: Counter[str] = Counter()
    opened: Counter[str] = Counter()
    seats: Counter[tuple[str, int]] = Counter()
    for number in range(1, rounds + 1):
        ratings = rng.normal(0, 250, n) if number > 1 else np.full(n, np.nan)
        sd = rng.uniform(20, 200, n)
        rnd = adaptive_round(players, ratings, np.diag(sd**2), history)
        assert rnd.number == number
        seen = [p for pr in rnd.pairings for p in (pr.first, pr.second)] + list(rnd.byes)
        assert sorted(seen) == sorted(players)
        assert len(rnd.byes) == n % 2
        for b in rnd.byes:
            assert byes[b] == min(byes[p] for p in players)
        byes.update(rnd.byes)
        for pr in rnd.pairings:
            assert opened[pr.first] <= opened[pr.second]
            opened[pr.first] += 1
            opened[pr.second] -= 1
            for game in pr.games():
                seats.update((bot, seat) for seat, bot in enumerate(game))
        history.append(rnd)
    assert all(seats[(p, 0)] == seats[(p, 1)] for p in players)


def test_games_each_format_plans() -> None:
    """300 bots: a round robin is 89,700 games, a 9-round Swiss 2,700, the adaptive format
    at most 22,200 (the whole rounds within a quarter of the round robin's); 301 bots: a
    Swiss round has 150 pairs."""
    rr = planned_games(TournamentFormat.ROUND_ROBIN, 300)
    assert rr == 300 * 299
    assert planned_games(TournamentFormat.SWISS, 300, rounds=9) == 2700
    assert planned_games(TournamentFormat.SWISS, 301, rounds=9) == 2700
    assert planned_games(TournamentFormat.ADAPTIVE, 300) == 74 * 300 <= rr / 4
    assert planned_games(TournamentFormat.ADAPTIVE, 300, budget=3000) == 3000
    assert planned_games(TournamentFormat.ADAPTIVE, 4, budget=1) == 4  # at least one round
    assert planned_games(TournamentFormat.GAUNTLET, 10, cycles=2) == 36


def test_plan_arithmetic_and_the_cpu_per_bot_it_uses() -> None:
    """CPU-hours are games x (two bots' CPU + start-up); hours divide them by the cores; the
    CPU per bot is the stored games' mean, else the default, never above the time control."""
    plan = Plan(300, "adaptive", 22_200, 40.0, 16)
    assert plan.cpu_hours == pytest.approx(22_200 * (80.0 + START_CPU_S) / 3600)
    assert plan.hours == pytest.approx(plan.cpu_hours / 16)
    assert cpu_per_bot([], None) == (DEFAULT_CPU_PER_BOT_S, "default 40 s")
    assert cpu_per_bot([10.0, 30.0], None)[0] == 20.0
    value, source = cpu_per_bot([], 25.0)
    assert value == 25.0 and "capped" in source
