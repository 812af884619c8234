"""Likelihood of superiority: how sure we are that one player is stronger than another."""

from __future__ import annotations

import math

import numpy as np

from referee.ratings.mle import Fit, FloatArray


def _normal_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def los_matrix(fit: Fit) -> FloatArray:
    """``m[i, j]`` = probability that player i is truly stronger than player j.

    From the fit's normal approximation: Φ((r_i - r_j) / se(r_i - r_j)), with the standard
    error of the difference from the full covariance (so it does not depend on the anchor).
    ``m[i, j] + m[j, i] = 1``; the diagonal is NaN.
    """
    r = fit.ratings
    c = fit.covariance
    var = np.diag(c)[:, None] + np.diag(c)[None, :] - 2.0 * c
    diff = r[:, None] - r[None, :]
    n = len(r)
    out = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            sd = math.sqrt(max(float(var[i, j]), 0.0))
            d = float(diff[i, j])
            out[i, j] = _normal_cdf(d / sd) if sd > 0 else (0.5 if d == 0 else float(d > 0))
    return out


def head_to_head_los(wins: float, losses: float) -> float:
    """The classic likelihood of superiority from one pairing's wins and losses alone.

    Draws carry no information about who is stronger and are ignored:
    LOS = Φ((W - L) / sqrt(W + L)). With no decisive game it is 0.5.
    """
    if wins < 0 or losses < 0:
        raise ValueError("wins and losses must be >= 0")
    if wins + losses == 0:
        return 0.5
    return _normal_cdf((wins - losses) / math.sqrt(wins + losses))
