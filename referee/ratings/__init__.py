"""Ratings: game results as plain data in, Elo tables out (pure: no I/O, no database).

- :mod:`.results`  the :class:`GameResult` record every other module consumes
- :mod:`.elo`      incremental K-factor Elo (order dependent, for comparison)
- :mod:`.mle`      maximum-likelihood Bradley–Terry fit of all games with 95% intervals
- :mod:`.los`      likelihood-of-superiority matrices
- :mod:`.table`    leaderboard rows and the head-to-head cross table
- :mod:`.ladder`   the live openskill ladder between tournaments

The maths and its conventions are described in ``docs/ratings.md``.
"""

from referee.ratings.elo import expected_score, incremental_elo, update
from referee.ratings.ladder import Ladder, LadderRow
from referee.ratings.los import head_to_head_los, los_matrix
from referee.ratings.mle import Fit, fit_ratings
from referee.ratings.results import GameResult
from referee.ratings.table import HeadToHead, Leaderboard, Row, build_leaderboard, cross_table

__all__ = [
    "Fit",
    "GameResult",
    "HeadToHead",
    "Ladder",
    "LadderRow",
    "Leaderboard",
    "Row",
    "build_leaderboard",
    "cross_table",
    "expected_score",
    "fit_ratings",
    "head_to_head_los",
    "incremental_elo",
    "los_matrix",
    "update",
]
