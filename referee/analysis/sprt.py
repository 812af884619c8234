"""The generalized SPRT on the pentanomial model of game pairs.

Two bots play game *pairs* on one opening with the seats swapped. A pair scores 0, 1/4, 1/2,
3/4 or 1 for NEW (its points over the two games, halved): five outcomes, the *pentanomial*
model. Pairs are independent even when the openings or the seats are not balanced, which is
why fishtest moved from single games (trinomial) to pairs.

The test (M. Van den Bergh, "A generalized sequential probability ratio test"): for a
hypothesis "the expected pair score is ``s``", the most likely distribution of the five
outcomes given the observed frequencies ``f`` is ``p_i = f_i / (1 + lam * (a_i - s))``, with
the Lagrange multiplier ``lam`` chosen so the ``p_i`` sum to one (then their mean is ``s``).
The log-likelihood ratio of H1 (``s1``) against H0 (``s0``) is ``N * sum f_i ln(p1_i / p0_i)``
for ``N`` pairs. The test stops when it leaves ``(ln(beta/(1-alpha)), ln((1-beta)/alpha))``
(Wald's bounds): above, H1 is accepted; below, H0.

Elo here is *logistic* Elo: a score ``s`` is ``-400 log10(1/s - 1)`` Elo, the scale of the
leaderboard. Empty outcome bins get a pseudo-count of ``REGULARIZE`` pairs so that the
likelihood stays finite after a handful of pairs (the effect vanishes as pairs accrue).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

#: The pair scores of the five outcomes (NEW's points over two games, halved).
OUTCOMES: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
#: Pseudo-count given to an empty outcome bin.
REGULARIZE = 1e-3
#: Two-sided 95% normal quantile.
Z95 = 1.959963984540054


def elo_to_score(elo: float) -> float:
    """The expected score of a side stronger by ``elo`` logistic Elo points."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def score_to_elo(score: float) -> float:
    """The logistic Elo difference of an expected score (infinite at 0 and 1)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's stopping bounds ``(lower, upper)`` on the LLR for error rates alpha and beta."""
    if not (0.0 < alpha < 0.5 and 0.0 < beta < 0.5):
        raise ValueError("alpha and beta must lie strictly between 0 and 0.5")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def pair_outcome(points: float) -> int:
    """The pentanomial bin of NEW's points over one pair (0, 0.5, 1, 1.5 or 2)."""
    index = round(points * 2)
    if not 0 <= index <= 4 or abs(points * 2 - index) > 1e-9:
        raise ValueError(f"a pair scores 0, 0.5, 1, 1.5 or 2 points, not {points!r}")
    return index


def _frequencies(counts: Sequence[float]) -> tuple[float, list[float]]:
    if len(counts) != len(OUTCOMES) or any(c < 0 for c in counts):
        raise ValueError("pentanomial counts are five numbers >= 0")
    padded = [c if c > 0 else REGULARIZE for c in counts]
    total = sum(padded)
    return total, [c / total for c in padded]


def _constrained(freqs: Sequence[float], s: float) -> list[float]:
    """The distribution with mean ``s`` closest (in likelihood) to ``freqs``.

    Solves ``g(lam) = sum f_i (a_i - s) / (1 + lam (a_i - s)) = 0`` for ``lam`` by bisection
    on the interval where every ``1 + lam (a_i - s)`` stays positive; ``g`` is strictly
    decreasing there, so the root is unique.
    """
    d = [a - s for a in OUTCOMES]
    lo = -1.0 / max(d) if max(d) > 0 else -1e12
    hi = -1.0 / min(d) if min(d) < 0 else 1e12
    # Stay a hair inside the open interval: g tends to -inf/+inf at its ends.
    span = hi - lo
    lo, hi = lo + span * 1e-15, hi - span * 1e-15

    def g(lam: float) -> float:
        return sum(f * di / (1.0 + lam * di) for f, di in zip(freqs, d, strict=True))

    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if g(mid) > 0.0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * max(1.0, abs(mid)):
            break
    lam = 0.5 * (lo + hi)
    p = [f / (1.0 + lam * di) for f, di in zip(freqs, d, strict=True)]
    total = sum(p)
    return [x / total for x in p]


def llr(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The GSPRT log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for the
    pentanomial ``counts`` (pairs scoring 0, 1/4, 1/2, 3/4, 1 for NEW)."""
    if sum(counts) == 0:
        return 0.0
    total, freqs = _frequencies(counts)
    p0 = _constrained(freqs, elo_to_score(elo0))
    p1 = _constrained(freqs, elo_to_score(elo1))
    return total * sum(f * math.log(b / a) for f, a, b in zip(freqs, p0, p1, strict=True) if f > 0)


def llr_normal_approx(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The usual normal approximation of the same LLR (a cross-check for :func:`llr`):
    ``N (s1 - s0) (2 mean - s0 - s1) / (2 var)``."""
    total, freqs = _frequencies(counts)
    mean = sum(f * a for f, a in zip(freqs, OUTCOMES, strict=True))
    var = sum(f * (a - mean) ** 2 for f, a in zip(freqs, OUTCOMES, strict=True))
    s0, s1 = elo_to_score(elo0), elo_to_score(elo1)
    return total * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


@dataclass(frozen=True, slots=True)
class EloEstimate:
    """NEW's logistic Elo advantage and its 95% interval, from the pair scores."""

    elo: float
    low: float
    high: float
    score: float

    def __str__(self) -> str:
        return f"{self.elo:+.1f} [{self.low:+.1f}, {self.high:+.1f}]"


def elo_estimate(counts: Sequence[int]) -> EloEstimate:
    """Mean pair score, its standard error from the pair variance, both mapped to Elo."""
    n = sum(counts)
    if n == 0:
        return EloEstimate(0.0, -math.inf, math.inf, 0.5)
    mean = sum(c * a for c, a in zip(counts, OUTCOMES, strict=True)) / n
    var = sum(c * (a - mean) ** 2 for c, a in zip(counts, OUTCOMES, strict=True)) / n
    half = Z95 * math.sqrt(var / n)
    return EloEstimate(
        score_to_elo(mean), score_to_elo(mean - half), score_to_elo(mean + half), mean
    )


class Decision(Enum):
    """Where the test stands."""

    CONTINUE = "continue"
    H0 = "H0"
    H1 = "H1"


class Sprt:
    """A running test: feed pairs with :meth:`add_pair`, read :attr:`decision`."""

    def __init__(self, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05) -> None:
        if not elo1 > elo0:
            raise ValueError("elo1 must be greater than elo0")
        self.elo0, self.elo1, self.alpha, self.beta = elo0, elo1, alpha, beta
        self.lower, self.upper = bounds(alpha, beta)
        #: Pairs per outcome (NEW scoring 0, 1/4, 1/2, 3/4, 1 of the pair).
        self.counts = [0, 0, 0, 0, 0]
        self.llr = 0.0

    def add_pair(self, points: float) -> Decision:
        """Count one pair (NEW's points over its two games) and return the decision."""
        self.counts[pair_outcome(points)] += 1
        self.llr = llr(self.counts, self.elo0, self.elo1)
        return self.decision

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    @property
    def decision(self) -> Decision:
        if self.llr >= self.upper:
            return Decision.H1
        if self.llr <= self.lower:
            return Decision.H0
        return Decision.CONTINUE

    def estimate(self) -> EloEstimate:
        return elo_estimate(self.counts)

    def status(self) -> str:
        """One line: LLR and bounds, pair counts, the Elo estimate."""
        c = self.counts
        return (
            f"LLR {self.llr:+.2f} ({self.lower:+.2f}, {self.upper:+.2f}) "
            f"[{self.elo0:g}, {self.elo1:g}]  pairs {self.pairs} "
            f"(0-2 {c[0]}, 0.5-1.5 {c[1]}, 1-1 {c[2]}, 1.5-0.5 {c[3]}, 2-0 {c[4]})  "
            f"Elo {self.estimate()}"
        )

    def sentence(self, new: str, base: str) -> str:
        """The verdict as a sentence people read."""
        est = self.estimate()
        games = 2 * self.pairs
        tail = (
            f"after {self.pairs} pairs ({games} games): Elo {est} (95%), "
            f"LLR {self.llr:+.2f} outside ({self.lower:+.2f}, {self.upper:+.2f})"
        )
        if self.decision is Decision.H1:
            return (
                f"H1 accepted: {new} is stronger than {base} (elo <= {self.elo0:g} rejected "
                f"for elo >= {self.elo1:g}; estimated {est.elo:+.1f}), {tail}."
            )
        if self.decision is Decision.H0:
            return (
                f"H0 accepted: {new} is not stronger than {base} by {self.elo1:g} Elo "
                f"(estimated {est.elo:+.1f}), {tail}."
            )
        return f"No decision yet: {tail.replace('outside', 'inside')}."
