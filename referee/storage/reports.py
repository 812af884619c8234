"""The instructor's reports (grades, similarity): saved by their commands, shown by the
instructor's web pages. A report is a JSON body; the newest of each kind is the one shown."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from referee.storage.db import Database
from referee.storage.models import InstructorReport

KINDS = ("grades", "similarity")


@dataclass(frozen=True, slots=True)
class Report:
    id: int
    kind: str
    created_at: datetime
    body: dict[str, Any]


def save_report(db: Database, kind: str, body: Mapping[str, object]) -> Report:
    """Store a report of ``kind`` (one of :data:`KINDS`)."""
    if kind not in KINDS:
        raise ValueError(f"report kind {kind!r} is not one of {', '.join(KINDS)}")
    with db.write() as s:
        row = InstructorReport(kind=kind, body=dict(body))
        s.add(row)
        s.flush()
        return Report(row.id, row.kind, row.created_at, dict(row.body))


def latest_report(db: Database, kind: str) -> Report | None:
    """The newest report of ``kind`` (``None``: none yet)."""
    with db.read() as s:
        row = s.scalars(
            select(InstructorReport)
            .where(InstructorReport.kind == kind)
            .order_by(InstructorReport.created_at.desc(), InstructorReport.id.desc())
            .limit(1)
        ).one_or_none()
        return None if row is None else Report(row.id, row.kind, row.created_at, dict(row.body))
