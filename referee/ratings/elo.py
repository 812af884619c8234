"""Incremental K-factor Elo: each game moves both ratings towards the result.

It depends on the order of the games (the maximum-likelihood fit in :mod:`.mle` does not) and is
shown beside the fit because it is the number people know.
"""

from __future__ import annotations

from collections.abc import Iterable

from referee.ratings.results import GameResult

DEFAULT_K = 32.0
DEFAULT_INITIAL = 1500.0
SCALE = 400.0
"""Elo points for a factor 10 in the odds of winning."""


def expected_score(rating: float, opponent: float, scale: float = SCALE) -> float:
    """The expected score of a player rated ``rating`` against one rated ``opponent``."""
    return float(1.0 / (1.0 + 10.0 ** ((opponent - rating) / scale)))


def update(
    rating: float, opponent: float, score: float, k: float = DEFAULT_K
) -> tuple[float, float]:
    """Both new ratings after one game in which the first player scored ``score``."""
    delta = k * (score - expected_score(rating, opponent))
    return rating + delta, opponent - delta


def incremental_elo(
    results: Iterable[GameResult],
    k: float = DEFAULT_K,
    initial: float = DEFAULT_INITIAL,
) -> dict[str, float]:
    """Ratings after replaying the counted games in the order given, everyone starting at
    ``initial``."""
    ratings: dict[str, float] = {}
    for r in results:
        a = ratings.setdefault(r.first, initial)
        b = ratings.setdefault(r.second, initial)
        if r.counted:
            ratings[r.first], ratings[r.second] = update(a, b, r.score, k)
    return ratings
