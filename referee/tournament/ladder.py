"""The live ladder: an openskill rating over every stored game, saved as snapshots.

The ladder is rebuilt from the stored games in the order they finished, so it can never count
a game twice or miss one after a crash (a snapshot is a cache of that replay, not the truth).
Rebuilding is cheap next to playing: about 20 us per game.
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.ratings import Ladder, LadderRow
from referee.storage import RatingInput, Repository

METHOD = "openskill"
DEFAULT_LADDER = "main"


@dataclass(frozen=True, slots=True)
class LadderStanding:
    rows: tuple[LadderRow, ...]
    games: int
    #: label -> bot version id
    ids: dict[str, int]


def compute_ladder(repo: Repository) -> LadderStanding:
    """The ladder over every stored game (voided forfeits and aborted games change nothing)."""
    results = repo.game_results()
    ids = {v.label: v.id for v in repo.list_bot_versions()}
    ladder = Ladder()
    ladder.record_all(results)
    return LadderStanding(tuple(ladder.standings()), len(results), ids)


def update_ladder(repo: Repository, name: str = DEFAULT_LADDER) -> LadderStanding:
    """Recompute the ladder and store it as a new snapshot of ladder ``name``."""
    standing = compute_ladder(repo)
    rows = [
        RatingInput(
            bot_version_id=standing.ids[r.player],
            rating=r.ordinal,
            mu=r.mu,
            sigma=r.sigma,
            games=r.games,
            provisional=r.provisional,
        )
        for r in standing.rows
        if r.player in standing.ids
    ]
    if rows:
        repo.save_ratings(
            METHOD, rows, ladder=name, anchor="mu - 3 sigma", games_counted=standing.games
        )
    return standing
