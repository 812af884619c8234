"""Lesson runs: a later version's move on each position an earlier version of the same bot
lost (``vN solves X of the Y positions vM lost``), stored per position as the server's
background job judged it (:mod:`referee.hosting.lessonjob`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import delete, select

from referee.storage.db import Database
from referee.storage.models import LessonRun


@dataclass(frozen=True, slots=True)
class PositionRun:
    """What version ``version_id`` played on one position ``lessons_of_id`` lost."""

    version_id: int
    lessons_of_id: int
    game_uid: str
    ply: int
    seat: int
    result: str
    move: str | None
    seconds: float

    @property
    def solved(self) -> bool:
        return self.result == "solved"

    @property
    def key(self) -> tuple[str, int, int]:
        """The position: its game, ply and seat (a lesson's own identity)."""
        return (self.game_uid, self.ply, self.seat)


def save_runs(db: Database, version_id: int, runs: Iterable[PositionRun]) -> int:
    """Store ``version_id``'s runs, replacing any it had (a rerun); how many were stored."""
    rows = [
        LessonRun(
            version_id=version_id,
            lessons_of_id=r.lessons_of_id,
            game_uid=r.game_uid[:64],
            ply=r.ply,
            seat=r.seat,
            result=r.result[:16],
            move=None if r.move is None else r.move[:64],
            seconds=r.seconds,
        )
        for r in runs
    ]
    with db.write() as s:
        s.execute(delete(LessonRun).where(LessonRun.version_id == version_id))
        s.add_all(rows)
    return len(rows)


def runs_of(db: Database, version_ids: Iterable[int]) -> list[PositionRun]:
    """The stored runs of these versions, by version, then position."""
    ids = list(version_ids)
    if not ids:
        return []
    with db.read() as s:
        rows = s.scalars(
            select(LessonRun)
            .where(LessonRun.version_id.in_(ids))
            .order_by(LessonRun.version_id, LessonRun.lessons_of_id, LessonRun.id)
        ).all()
        return [
            PositionRun(
                r.version_id,
                r.lessons_of_id,
                r.game_uid,
                r.ply,
                r.seat,
                r.result,
                r.move,
                r.seconds,
            )
            for r in rows
        ]
