"""Waiting for a locked SQLite database: how long one attempt waits, and how a patient writer
(a tournament runner) tries again before it gives up.

SQLite lets one writer in at a time; every other writer waits for the lock up to the busy
timeout (``ARENA_DB_BUSY_TIMEOUT_S``, 30 s by default) and then fails with "database is
locked". A command that writes once gives up then, with one line saying so. A runner that
writes for hours (``referee tournament run``) is patient: its write transactions begin with
``BEGIN IMMEDIATE``, which takes the lock before anything is read or written, so a failed
begin can simply be tried again, after a pause that doubles each time (:class:`LockWait`),
before the run gives up.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from referee.telemetry.logs import get_logger

log = get_logger(__name__)

#: Seconds one attempt to take a SQLite lock waits (the busy timeout), from the environment.
BUSY_TIMEOUT_ENV = "ARENA_DB_BUSY_TIMEOUT_S"
DEFAULT_BUSY_TIMEOUT_S = 30.0


def busy_timeout_s() -> float:
    """The busy timeout: ``$ARENA_DB_BUSY_TIMEOUT_S`` when it is a number above 0, else 30."""
    try:
        value = float(os.environ.get(BUSY_TIMEOUT_ENV, ""))
    except ValueError:
        return DEFAULT_BUSY_TIMEOUT_S
    return value if 0 < value < float("inf") else DEFAULT_BUSY_TIMEOUT_S


@dataclass(frozen=True, slots=True)
class LockWait:
    """After a failed attempt (a whole busy timeout spent waiting), pause ``first_delay_s``,
    doubling up to ``max_delay_s``, for at most ``retries`` more attempts."""

    retries: int = 4
    first_delay_s: float = 1.0
    max_delay_s: float = 30.0

    def delays(self) -> Iterator[float]:
        delay = self.first_delay_s
        for _ in range(self.retries):
            yield delay
            delay = min(self.max_delay_s, delay * 2)

    def longest_s(self, busy_s: float) -> float:
        """The longest a writer waits in all before it gives up."""
        return busy_s * (self.retries + 1) + sum(self.delays())


def is_locked(exc: BaseException) -> bool:
    """Whether ``exc`` (a SQLAlchemy or sqlite3 error) says the database is locked."""
    text = str(getattr(exc, "orig", None) or exc).lower()
    return "database is locked" in text or "database table is locked" in text


def begin(conn: Any, statement: str, wait: LockWait | None) -> None:
    """Run ``statement`` (a ``BEGIN``) on ``conn``; with ``wait``, a locked database is tried
    again after each of its pauses before the error is raised."""
    pauses = iter(wait.delays()) if wait is not None else iter(())
    while True:
        try:
            conn.exec_driver_sql(statement)
            return
        except Exception as exc:
            pause = next(pauses, None) if is_locked(exc) else None
            if pause is None:
                raise
            log.warning("database_locked", retry_in_s=pause)
            time.sleep(pause)
