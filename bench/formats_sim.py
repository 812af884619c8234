"""Simulated classes for ``bench/formats.py``: true strengths, Elo outcomes with draws, the
formats' schedules and the accuracy of the order each one ends with. No bot processes.

- Strengths: normal, standard deviation ``STRENGTH_SD`` (250) Elo, drawn per class.
- A game: expected score ``E = 1 / (1 + 10^(-d/400))`` for a strength difference d; a draw
  with probability ``DRAW_AT_EVEN · 4E(1-E)`` (20% between equals), a win with ``E - draw/2``,
  so the expected score is E exactly. No first-seat advantage (every pairing is a game pair
  with the sides swapped anyway).
- Every format is ranked by the same maximum-likelihood fit the platform uses
  (:func:`referee.ratings.mle.fit_tally`, warm-started from the previous round's fit), so the
  comparison is between schedules, not estimators.
- The adaptive format's rounds come from :func:`referee.tournament.adaptive.adaptive_round`'s
  own parts (values and matching on indices), Swiss's from
  :func:`referee.tournament.pairing.swiss_round`: the code the tournaments run.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from referee.ratings.mle import Fit, Tally, fit_tally
from referee.tournament.adaptive import match_by_value, pairing_fit, pairing_values
from referee.tournament.pairing import Round, round_robin, swiss_round

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

STRENGTH_SD = 250.0
DRAW_AT_EVEN = 0.2


def game_points(rng: np.random.Generator, diff_elo: FloatArray) -> FloatArray:
    """One game's points for the side ``diff_elo`` stronger, per element (1, 1/2 or 0)."""
    e = 1.0 / (1.0 + np.power(10.0, -diff_elo / 400.0))
    draw = DRAW_AT_EVEN * 4.0 * e * (1.0 - e)
    win = e - draw / 2.0
    u = rng.random(diff_elo.shape)
    return np.where(u < win, 1.0, np.where(u < win + draw, 0.5, 0.0))


@dataclass(slots=True)
class Class:
    """One simulated class: true strengths and the games tallied so far."""

    strength: FloatArray
    games: FloatArray
    points: FloatArray
    rng: np.random.Generator
    fit: Fit | None = None

    @classmethod
    def draw(cls, n: int, rng: np.random.Generator) -> Class:
        strength = rng.normal(0.0, STRENGTH_SD, n)
        return cls(strength, np.zeros((n, n)), np.zeros((n, n)), rng)

    @property
    def n(self) -> int:
        return len(self.strength)

    @property
    def played(self) -> int:
        return round(float(self.games.sum()))

    def play_pairs(self, a: IntArray, b: IntArray) -> None:
        """A game pair for each (a, b): a has the first seat in game 1, b in game 2."""
        d = self.strength[a] - self.strength[b]
        first = game_points(self.rng, d)
        second = game_points(self.rng, -d)
        np.add.at(self.games, (a, b), 1.0)
        np.add.at(self.points, (a, b), first)
        np.add.at(self.games, (b, a), 1.0)
        np.add.at(self.points, (b, a), second)

    def tally(self) -> Tally:
        return Tally(tuple(str(i) for i in range(self.n)), self.games, self.points)

    def refit(self) -> Fit:
        """The standings' fit (maximum likelihood, as a tournament's table)."""
        start = self.fit.ratings if self.fit is not None else None
        self.fit = fit_tally(self.tally(), start=start)
        return self.fit

    def refit_for_pairing(self) -> Fit:
        """The adaptive format's fit between rounds (:func:`pairing_fit`)."""
        start = self.fit.ratings if self.fit is not None else None
        self.fit = pairing_fit(self.tally(), start=start)
        return self.fit


# --------------------------------------------------------------------------- accuracy


def kendall_tau(x: Sequence[float] | FloatArray, y: Sequence[float] | FloatArray) -> float:
    """Kendall's tau-b of two score vectors (ties allowed)."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    sa = np.sign(a[:, None] - a[None, :])
    sb = np.sign(b[:, None] - b[None, :])
    upper = np.triu_indices(len(a), 1)
    sa, sb = sa[upper], sb[upper]
    num = float((sa * sb).sum())
    den = math.sqrt(float((sa != 0).sum()) * float((sb != 0).sum()))
    return num / den if den else 0.0


def ranks(x: FloatArray) -> FloatArray:
    """Ranks from 1 (best = highest score), ties sharing their average rank."""
    order = np.argsort(-x, kind="stable")
    r = np.empty(len(x))
    r[order] = np.arange(1, len(x) + 1)
    for value in np.unique(x):
        tied = x == value
        if tied.sum() > 1:
            r[tied] = r[tied].mean()
    return r


def spearman_rho(x: FloatArray, y: FloatArray) -> float:
    rx, ry = ranks(np.asarray(x, float)), ranks(np.asarray(y, float))
    if rx.std() == 0.0 or ry.std() == 0.0:  # all tied: no order, no correlation
        return 0.0
    return float(np.corrcoef(rx, ry)[0, 1])


def accuracy(true: FloatArray, estimate: FloatArray) -> dict[str, float]:
    """How well ``estimate`` orders the bots whose strengths are ``true``. Ratings within a
    millionth of an Elo point are a tie (equal scores in a round robin fit equal ratings, up
    to the fit's rounding)."""
    est = np.asarray(np.round(np.nan_to_num(estimate, nan=-1e9), 6), dtype=np.float64)
    top = np.argsort(-true, kind="stable")
    got = np.argsort(-est, kind="stable")
    k = min(10, len(true))
    return {
        "tau": kendall_tau(true, est),
        "rho": spearman_rho(true, est),
        "top1": float(top[0] == got[0]),
        "top10": float(np.array_equal(top[:k], got[:k])),
        "top10_set": float(set(top[:k].tolist()) == set(got[:k].tolist())),
        "rank_error": float(np.abs(ranks(true) - ranks(est)).mean()),
    }


# --------------------------------------------------------------------------- formats

Checkpoint = tuple[str, int]
"""A row of the results: a format's label and the games after which it is measured."""


def run_round_robin(c: Class) -> dict[str, dict[str, float]]:
    """The double round robin: every pair meets once as a game pair (N(N-1) games)."""
    a, b = np.triu_indices(c.n, 1)
    c.play_pairs(a, b)
    return {"round robin": {"games": c.played, **accuracy(c.strength, c.refit().ratings)}}


def run_swiss(c: Class, checkpoints: Sequence[int]) -> dict[str, dict[str, float]]:
    """Swiss (the platform's Dutch pairing) to the largest of ``checkpoints`` rounds, seeded
    in index order (random relative to strength), ranked by the ML fit at each checkpoint."""
    players = [str(i) for i in range(c.n)]
    scores = dict.fromkeys(players, 0.0)
    history: list[Round] = []
    out: dict[str, dict[str, float]] = {}
    for number in range(1, max(checkpoints) + 1):
        rnd = swiss_round(players, scores, history)
        history.append(rnd)
        a = np.array([int(p.first) for p in rnd.pairings], dtype=np.int64)
        b = np.array([int(p.second) for p in rnd.pairings], dtype=np.int64)
        before = c.points.copy()
        c.play_pairs(a, b)
        gained = (c.points - before).sum(axis=1)
        for p in players:
            scores[p] += float(gained[int(p)])
        for p in rnd.byes:
            scores[p] += 2.0
        if number in checkpoints:
            fit = c.refit()
            out[f"swiss {number} rounds"] = {"games": c.played, **accuracy(c.strength, fit.ratings)}
    return out


Pairer = Callable[[Class, IntArray, int], list[tuple[int, int]]]


def adaptive_pairs(c: Class, met: IntArray, number: int) -> list[tuple[int, int]]:
    """The adaptive format's matching (bye-free: the bench uses even class sizes); before
    the first game every rating is unknown (NaN), as in a new tournament."""
    if c.fit is None:
        unknown = np.full(c.n, np.nan)
        return match_by_value(pairing_values(unknown, np.full((c.n, c.n), np.nan)), met)
    return match_by_value(pairing_values(c.fit.ratings, c.fit.covariance), met)


def neighbour_pairs(c: Class, met: IntArray, number: int) -> list[tuple[int, int]]:
    """The plain baseline: neighbours in the current ratings (1-2, 3-4, ...; every other
    round shifted by one, 2-3, 4-5, ..., so neighbours do not meet every round)."""
    if c.fit is None:
        return [(i, i + 1) for i in range(0, c.n - 1, 2)]
    order = np.argsort(-c.fit.ratings, kind="stable").tolist()
    if number % 2 == 0 and c.n > 2:
        order = [*order[1:-1], order[0], order[-1]]
    return [(order[i], order[i + 1]) for i in range(0, c.n - 1, 2)]


BOUND_WIDTH_ELO = 120.0
"""The true-strength schedule's reach for 300 bots: opponents weighted by ``exp(-d² / 2w²)``,
d the true gap (the width that ordered simulated 300-bot classes best at 74 rounds); for n
bots ``300 / n`` times as wide, so the same share of the class stays within reach."""
BOUND_REPEAT_WEIGHT = 0.3


def true_order_pairs(c: Class, met: IntArray, number: int) -> list[tuple[int, int]]:
    """What no real schedule can do: pair by the *true* strengths, every bot a game pair a
    round, opponents weighted by ``exp(-d² / 2w²)`` (d the true gap, w ``BOUND_WIDTH_ELO``
    scaled to the class) with a random jitter and repeats discounted, matched like the
    adaptive format. Its tau
    is a practical ceiling for any schedule that gives every bot the same games: it knows
    everything the ratings' intervals could tell."""
    d = c.strength[:, None] - c.strength[None, :]
    width = BOUND_WIDTH_ELO * 300.0 / c.n
    jitter = c.rng.random((c.n, c.n))
    weight = np.exp(-(d**2) / (2.0 * width**2)) * (1.0 + 0.25 * (jitter + jitter.T))
    return match_by_value(weight, met, repeat_weight=BOUND_REPEAT_WEIGHT)


def round_robin_tau_exact(strength: Sequence[float]) -> float:
    """The expected Kendall tau of a double round robin's order, by enumerating every
    outcome of every game (3^(n(n-1)) of them: for two or three bots). In a round robin
    every pair plays the same games, so the maximum-likelihood order is the score order
    (equal scores, equal ratings: a tie, which tau-b counts as neither order)."""
    s = np.asarray(strength, dtype=float)
    n = len(s)
    games = [(i, j) for i in range(n) for j in range(n) if i != j]
    outcomes = []
    for i, j in games:
        e = 1.0 / (1.0 + 10.0 ** (-(s[i] - s[j]) / 400.0))
        draw = DRAW_AT_EVEN * 4.0 * e * (1.0 - e)
        outcomes.append(((1.0, e - draw / 2.0), (0.5, draw), (0.0, 1.0 - e - draw / 2.0)))
    expected = 0.0
    for combo in itertools.product(*outcomes):
        score = np.zeros(n)
        probability = 1.0
        for (i, j), (points, p) in zip(games, combo, strict=True):
            score[i] += points
            score[j] += 1.0 - points
            probability *= p
        expected += probability * kendall_tau(s, score)
    return expected


def run_rated_rounds(
    c: Class, pairer: Pairer, label: str, checkpoints: Sequence[int]
) -> dict[str, dict[str, float]]:
    """Rounds paired from the current fit (the adaptive format's, refitted after every
    round) up to the largest of ``checkpoints`` (rounds); at each checkpoint the order is
    read from the standings' fit, as a tournament's table would be."""
    met = np.zeros((c.n, c.n), dtype=np.int64)
    out: dict[str, dict[str, float]] = {}
    for number in range(1, max(checkpoints) + 1):
        pairs = pairer(c, met, number)
        a = np.array([p[0] for p in pairs], dtype=np.int64)
        b = np.array([p[1] for p in pairs], dtype=np.int64)
        c.play_pairs(a, b)
        np.add.at(met, (a, b), 1)
        np.add.at(met, (b, a), 1)
        fit = c.refit_for_pairing()
        if number in checkpoints:
            table = fit_tally(c.tally(), start=fit.ratings)
            out[f"{label} {number} rounds"] = {
                "games": c.played,
                **accuracy(c.strength, table.ratings),
            }
    return out


def fixed_rounds(n: int) -> int:
    """Rounds of a round robin of n (for the tests: the circle method's count)."""
    return len(round_robin([str(i) for i in range(n)]))
