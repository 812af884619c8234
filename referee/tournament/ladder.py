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
#: The game a ladder or table is of when none is named (the course's game).
DEFAULT_GAME = "tetress"


def ladder_name(name: str, game: str) -> str:
    """The stored ladder of ``game``: ``name`` for Tetress, ``name-GAME`` for another game, so
    that Tetress and ATT ratings are never one table."""
    return name if game == DEFAULT_GAME else f"{name}-{game}"


@dataclass(frozen=True, slots=True)
class LadderStanding:
    rows: tuple[LadderRow, ...]
    games: int
    #: label -> bot version id
    ids: dict[str, int]


def compute_ladder(repo: Repository, game: str = DEFAULT_GAME) -> LadderStanding:
    """The ladder over every stored game of ``game`` (voided forfeits and aborted games change
    nothing)."""
    results = repo.game_results(game=game)
    ids = {v.label: v.id for v in repo.list_bot_versions()}
    ladder = Ladder()
    ladder.record_all(results)
    return LadderStanding(tuple(ladder.standings()), len(results), ids)


def update_ladder(
    repo: Repository, name: str = DEFAULT_LADDER, game: str = DEFAULT_GAME
) -> LadderStanding:
    """Recompute the ladder of ``game`` and store it as a new snapshot of
    :func:`ladder_name` ``(name, game)``."""
    standing = compute_ladder(repo, game)
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
    stored = ladder_name(name, game)
    # A table every game of which was voided since (a feeder's) is saved empty, not left as it
    # was; a ladder that never had a game gets no snapshot.
    if rows or repo.latest_ratings(METHOD, ladder=stored) is not None:
        repo.save_ratings(
            METHOD,
            rows,
            ladder=stored,
            anchor="mu - 3 sigma",
            games_counted=standing.games,
        )
    return standing
