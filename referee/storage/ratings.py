"""Rating tables: snapshots of a tournament's or a ladder's ratings, newest first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import selectinload

from referee.storage.base import AreaRepository
from referee.storage.models import RatingEntry, RatingSnapshot, utcnow


@dataclass(frozen=True, slots=True)
class RatingInput:
    """One bot version's line in a rating table to be saved."""

    bot_version_id: int
    rating: float
    ci_low: float | None = None
    ci_high: float | None = None
    mu: float | None = None
    sigma: float | None = None
    games: int = 0
    provisional: bool = False


@dataclass(frozen=True, slots=True)
class RatingRow:
    rank: int
    bot_version_id: int
    rating: float
    ci_low: float | None
    ci_high: float | None
    mu: float | None
    sigma: float | None
    games: int
    provisional: bool


@dataclass(frozen=True, slots=True)
class RatingTable:
    snapshot_id: int
    method: str
    tournament_id: int | None
    ladder: str | None
    anchor: str | None
    games_counted: int
    taken_at: datetime
    rows: tuple[RatingRow, ...]


class RatingRepository(AreaRepository):
    """Stored rating tables (the fits themselves live in :mod:`referee.ratings`)."""

    def save_ratings(
        self,
        method: str,
        rows: Sequence[RatingInput],
        *,
        tournament_id: int | None = None,
        ladder: str | None = None,
        anchor: str | None = None,
        games_counted: int = 0,
        taken_at: datetime | None = None,
    ) -> int:
        """Store a rating table (rank = order of ``rows``) for a tournament or a ladder;
        returns the snapshot id."""
        if (tournament_id is None) == (ladder is None):
            raise ValueError("give exactly one of tournament_id and ladder")
        with self.db.write() as s:
            snapshot = RatingSnapshot(
                tournament_id=tournament_id,
                ladder=ladder,
                method=method,
                anchor=anchor,
                games_counted=games_counted,
                taken_at=taken_at or utcnow(),
            )
            s.add(snapshot)
            s.flush()
            for rank, r in enumerate(rows, start=1):
                s.add(
                    RatingEntry(
                        snapshot_id=snapshot.id,
                        bot_version_id=r.bot_version_id,
                        rank=rank,
                        rating=r.rating,
                        ci_low=r.ci_low,
                        ci_high=r.ci_high,
                        mu=r.mu,
                        sigma=r.sigma,
                        games=r.games,
                        provisional=r.provisional,
                    )
                )
            s.flush()
            return snapshot.id

    def latest_ratings(
        self, method: str, *, tournament_id: int | None = None, ladder: str | None = None
    ) -> RatingTable | None:
        """The newest rating table of ``method`` for a tournament or a ladder."""
        tables = self.rating_history(method, tournament_id=tournament_id, ladder=ladder, limit=1)
        return tables[0] if tables else None

    def rating_history(
        self,
        method: str,
        *,
        tournament_id: int | None = None,
        ladder: str | None = None,
        limit: int | None = None,
    ) -> list[RatingTable]:
        """Rating tables of ``method``, newest first."""
        if (tournament_id is None) == (ladder is None):
            raise ValueError("give exactly one of tournament_id and ladder")
        with self.db.read() as s:
            query = (
                select(RatingSnapshot)
                .where(RatingSnapshot.method == method)
                .options(selectinload(RatingSnapshot.entries))
                .order_by(RatingSnapshot.taken_at.desc(), RatingSnapshot.id.desc())
            )
            if tournament_id is not None:
                query = query.where(RatingSnapshot.tournament_id == tournament_id)
            else:
                query = query.where(RatingSnapshot.ladder == ladder)
            if limit is not None:
                query = query.limit(limit)
            return [rating_table(snap) for snap in s.scalars(query)]


def rating_table(snap: RatingSnapshot) -> RatingTable:
    return RatingTable(
        snapshot_id=snap.id,
        method=snap.method,
        tournament_id=snap.tournament_id,
        ladder=snap.ladder,
        anchor=snap.anchor,
        games_counted=snap.games_counted,
        taken_at=snap.taken_at,
        rows=tuple(
            RatingRow(
                rank=e.rank,
                bot_version_id=e.bot_version_id,
                rating=e.rating,
                ci_low=e.ci_low,
                ci_high=e.ci_high,
                mu=e.mu,
                sigma=e.sigma,
                games=e.games,
                provisional=e.provisional,
            )
            for e in snap.entries
        ),
    )
