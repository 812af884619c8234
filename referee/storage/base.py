"""What every area repository shares: the database it works on, and small row helpers."""

from __future__ import annotations

from typing import Any

from referee.storage.db import Database


class AreaRepository:
    """One area of the storage API (players, bots, ...) over a :class:`Database`.

    Every method is one transaction and returns plain frozen dataclasses (never ORM objects),
    so results can cross threads and outlive sessions. :class:`~referee.storage.Repository`
    combines every area into the one front callers use.
    """

    def __init__(self, db: Database) -> None:
        self.db = db


def rowcount(result: Any) -> int:
    """Rows an UPDATE touched (``Result`` types only declare ``rowcount`` on some subclasses)."""
    return int(getattr(result, "rowcount", 0))
