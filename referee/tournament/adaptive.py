"""The adaptive format's pairing: each round, the games that settle the most uncertain orders.

Pure functions from the current maximum-likelihood ratings, their covariance and the rounds
already paired to the next round; the tournament schedule (:mod:`.schedule`) and the format
simulator (``bench/formats.py``) call the same code.

**What a pairing is worth.** For every two bots a and b, how unsettled their order is can be
measured by ``P(1 - P)``, with ``P`` the likelihood that a is stronger (``Φ(d / s)``, d the
rating difference and s its standard error): 1/4 when it is a coin toss, 0 when it is
settled. One more game pair between i and j adds ``I = 2 p (1 - p)`` (p the expected score)
to the information on ``θ_i - θ_j``, which lowers the variance of *every* difference by a
rank-one update of the covariance C: ``Δvar(a - b) = I (w_a - w_b)² / (1 + I s²_ij)`` with
``w = C (e_i - e_j)``. Before the game is played, the expected fall of ``P(1 - P)`` for a pair
whose difference loses the share ρ of its variance is ``Φ₂(z, z; ρ) - Φ(z)² ≈ ρ φ(z)²``
(the bivariate normal's derivative in its correlation at 0), so the value of pairing i with j
is::

    V_ij = I_ij / (1 + I_ij s²_ij) · Σ_{a<b} g_ab (w_a - w_b)²,   g_ab = φ(z_ab)² / s²_ab

The sum is ``uᵀ C L C u`` with L the Laplacian of g: one n-by-n matrix per round gives every
pair's value. Neighbours in the ratings whose intervals overlap (small z) weigh most, the
more so the less certain their ratings (large C), and a bot whose place is already settled
weighs little: this is the expected information of one more game, not mere proximity.

**The round.** Every bot plays (with an odd count the bye goes to the bot with the fewest byes
that has least to gain); the matching maximises the total value, a pair that has met counting
``repeat_weight`` (default 1/2) of its value per earlier meeting, so a pair meets again only
when no fresh opponent is worth as much. The matching is greedy (heaviest pair first), which
pairs every bot and stays cheap for a thousand bots.
Colours follow the Swiss rule (:func:`.pairing.colour_pairing`): who has had the first seat
less often gets it.

**Stopping.** :func:`adjacent_confidence` gives, for each pair of neighbours in the rating
order, the likelihood that the higher is truly stronger; the tournament stops when every one
reaches the instructor's confidence, or at its game budget.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from referee.ratings.mle import ELO_PER_NAT, Fit, Tally, fit_tally
from referee.tournament.pairing import PairingHistory, Round, colour_pairing

FloatArray = npt.NDArray[np.float64]

PRIOR_SD_ELO = 300.0
"""The rating uncertainty assumed for a bot without counted games (about a class's spread)."""
REPEAT_WEIGHT = 0.5
"""What a pair that has met counts of its value, per earlier meeting."""
DEFAULT_CONFIDENCE = 0.95


def pairing_fit(games: Tally, start: FloatArray | None = None) -> Fit:
    """The fit a round is paired from: maximum likelihood with a normal prior of the class's
    spread (``PRIOR_SD_ELO``) around the mean, so groups of bots that have not met yet (the
    first rounds) get sensible ratings and intervals; ``start`` warm-starts it."""
    # A pairing needs no more than a thousandth of an Elo point of precision.
    return fit_tally(games, start=start, rating_prior_sd=PRIOR_SD_ELO, tolerance=1e-5)


def _filled(ratings: FloatArray, covariance: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Ratings and covariance in natural units, with unrated bots (NaN) at the mean with the
    prior's variance and no correlation."""
    theta = np.asarray(ratings, dtype=np.float64) / ELO_PER_NAT
    cov = np.asarray(covariance, dtype=np.float64) / ELO_PER_NAT**2
    unrated = ~np.isfinite(theta) | ~np.isfinite(np.diag(cov))
    if unrated.any():
        theta = theta.copy()
        theta[unrated] = float(np.mean(theta[~unrated])) if (~unrated).any() else 0.0
        cov = np.where(unrated[:, None] | unrated[None, :], 0.0, cov)
        cov[unrated, unrated] = (PRIOR_SD_ELO / ELO_PER_NAT) ** 2
    return theta, np.nan_to_num(cov)


def _difference_variance(cov: FloatArray) -> FloatArray:
    d = np.diag(cov)
    return np.maximum(d[:, None] + d[None, :] - 2.0 * cov, 1e-12)


def pairing_values(ratings: FloatArray, covariance: FloatArray) -> FloatArray:
    """``V[i, j]``: the expected fall of the total order uncertainty ``Σ P(1 - P)`` from one
    more game pair between i and j (see the module docstring). Ratings in Elo, covariance in
    Elo²; NaN for a bot without games. Symmetric, zero diagonal."""
    theta, cov = _filled(ratings, covariance)
    n = len(theta)
    s2 = _difference_variance(cov)
    diff = theta[:, None] - theta[None, :]
    g = np.exp(-(diff**2) / s2) / (2.0 * math.pi) / s2
    np.fill_diagonal(g, 0.0)
    laplacian = np.diag(g.sum(axis=1)) - g
    m = cov @ laplacian @ cov
    md = np.diag(m)
    spread = np.maximum(md[:, None] + md[None, :] - 2.0 * m, 0.0)
    p = 1.0 / (1.0 + np.exp(-diff))
    info = 2.0 * p * (1.0 - p)
    values = info / (1.0 + info * s2) * spread
    values[np.arange(n), np.arange(n)] = 0.0
    return np.asarray(values, dtype=np.float64)


def adjacent_confidence(ratings: FloatArray, covariance: FloatArray) -> list[float]:
    """For bots in rating order (best first), the likelihood that each is stronger than the
    next one: ``Φ(d / s)`` of their difference (NaN ratings sort last)."""
    r = np.asarray(ratings, dtype=np.float64)
    order = np.argsort(np.where(np.isfinite(r), -r, np.inf), kind="stable")
    s2 = _difference_variance(np.nan_to_num(np.asarray(covariance, dtype=np.float64)))
    out: list[float] = []
    for a, b in itertools.pairwise(order):
        d = float(r[a] - r[b])
        if not math.isfinite(d):
            out.append(0.5)
            continue
        out.append(0.5 * (1.0 + math.erf(d / math.sqrt(2.0 * float(s2[a, b])))))
    return out


def order_settled(ratings: FloatArray, covariance: FloatArray, confidence: float) -> bool:
    """Whether every adjacent pair's order is known at ``confidence`` (the stopping rule)."""
    return all(c >= confidence for c in adjacent_confidence(ratings, covariance))


def match_by_value(
    values: FloatArray, met: npt.NDArray[np.int64], *, repeat_weight: float = REPEAT_WEIGHT
) -> list[tuple[int, int]]:
    """A perfect matching of the indices of ``values`` (an even count) of high total weight:
    ``values`` discounted by ``repeat_weight`` per earlier meeting (``met`` counts them).

    The greedy matching (heaviest pair first, ties to the lower indices), found in rounds of
    mutual best choices: every index whose best free partner also chooses it is paired, and
    the rest choose again. On the complete graph it pairs every index; its total is at least
    half the best matching's, and in practice close to it.
    """
    n = len(values)
    if n % 2:
        raise ValueError("an even number of bots is needed")
    weight = np.asarray(values * np.power(repeat_weight, met), dtype=np.float64)
    np.fill_diagonal(weight, -np.inf)
    free = np.arange(n)
    pairs: list[tuple[int, int]] = []
    while len(free):
        sub = weight[np.ix_(free, free)]
        best = np.argmax(sub, axis=1)
        idx = np.arange(len(free))
        mutual = (best[best] == idx) & (idx < best)
        if not mutual.any():  # ties in a cycle: take the heaviest pair alone
            flat = int(np.argmax(sub))
            mutual[flat // len(free)] = True
            best[flat // len(free)] = flat % len(free)
        chosen = np.flatnonzero(mutual)
        pairs.extend((int(free[i]), int(free[best[i]])) for i in chosen)
        taken = np.zeros(len(free), dtype=bool)
        taken[chosen] = True
        taken[best[chosen]] = True
        free = free[~taken]
    return _improve(pairs, weight)


def _improve(pairs: list[tuple[int, int]], weight: FloatArray) -> list[tuple[int, int]]:
    """Swap partners between two pairs wherever that raises the total (2-opt), the best
    swaps first, until no swap helps: mends the poor pairs a greedy pass leaves at its end."""
    for _ in range(4 * len(pairs)):
        a = np.array([p[0] for p in pairs])
        b = np.array([p[1] for p in pairs])
        now = weight[a, b]
        current = now[:, None] + now[None, :]
        crossed = weight[a[:, None], a[None, :]] + weight[b[:, None], b[None, :]]
        swapped = weight[a[:, None], b[None, :]] + weight[b[:, None], a[None, :]]
        gain = np.maximum(crossed, swapped) - current
        gain[np.tril_indices(len(pairs))] = 0.0
        scale = float(np.abs(now).max()) if len(now) else 0.0
        if not len(pairs) or float(gain.max()) <= 1e-9 * scale:
            break
        done: set[int] = set()
        useful = np.flatnonzero(gain > 1e-9 * scale)
        for flat in useful[np.argsort(-gain.ravel()[useful], kind="stable")]:
            k, m = divmod(int(flat), len(pairs))
            if k in done or m in done:
                continue
            done.update((k, m))
            if crossed[k, m] >= swapped[k, m]:
                pairs[k], pairs[m] = (int(a[k]), int(a[m])), (int(b[k]), int(b[m]))
            else:
                pairs[k], pairs[m] = (int(a[k]), int(b[m])), (int(b[k]), int(a[m]))
    return pairs


def adaptive_round(
    players: Sequence[str],
    ratings: FloatArray,
    covariance: FloatArray,
    history: Sequence[Round],
    *,
    repeat_weight: float = REPEAT_WEIGHT,
) -> Round:
    """The next round of the adaptive format (see the module docstring).

    ``players`` in seed order; ``ratings`` (Elo) and ``covariance`` (Elo²) of the current
    maximum-likelihood fit in the same order (NaN for a bot without counted games; all NaN
    before the first round); ``history`` the rounds already paired.
    """
    if len(set(players)) != len(players):
        raise ValueError("duplicate players")
    n = len(players)
    number = len(history) + 1
    past = PairingHistory.of(players, history)
    if n < 2:
        return Round(number, (), tuple(players))
    values = pairing_values(np.asarray(ratings), np.asarray(covariance))
    index = {p: i for i, p in enumerate(players)}
    met = np.zeros((n, n), dtype=np.int64)
    for rnd in history:
        for pr in rnd.pairings:
            if pr.first in index and pr.second in index:
                met[index[pr.first], index[pr.second]] += 1
                met[index[pr.second], index[pr.first]] += 1
    playing = list(range(n))
    byes: tuple[str, ...] = ()
    if n % 2:
        gain = values.max(axis=1)
        out = min(playing, key=lambda i: (past.byes[players[i]], gain[i], -i))
        playing.remove(out)
        byes = (players[out],)
    sub = np.ix_(playing, playing)
    pairs = match_by_value(values[sub], met[sub], repeat_weight=repeat_weight)
    theta, _ = _filled(np.asarray(ratings), np.asarray(covariance))
    pairings = []
    for a, b in pairs:
        hi, lo = sorted((playing[a], playing[b]), key=lambda i: (-theta[i], i))
        pairings.append(colour_pairing(players[hi], players[lo], past.balance, past.last, number))
    # Board 1 for the strongest pair, as in the other formats.
    pairings.sort(key=lambda pr: -max(theta[index[pr.first]], theta[index[pr.second]]))
    return Round(number, tuple(pairings), byes)
