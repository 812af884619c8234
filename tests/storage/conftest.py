"""Both storage backends for every storage test: a SQLite file and a throwaway PostgreSQL
database.

PostgreSQL: the server at 127.0.0.1:5432 (trust authentication, user ``postgres``; override
with ``ARENA_TEST_PG_ADMIN_URL``). One database ``arena_test_<random>`` is created per test
run through the ``postgres`` database and dropped at the end; each test starts from empty
tables. If the server cannot be reached the PostgreSQL tests skip with the reason, except
when ``CI=true``: then they fail.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

import pytest
from sqlalchemy import text

from engine.adjudication.verdicts import Verdict
from referee.storage import (
    Database,
    FinishedGame,
    MemoryMeasure,
    Repository,
    SeatResult,
    SourceKind,
    open_database,
)
from referee.storage.db import downgrade
from referee.storage.models import Base

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(scope="session")
def pg_run_database(
    throwaway_postgres: Callable[[], AbstractContextManager[str]],
) -> Iterator[str]:
    """The URL of this test run's own PostgreSQL database (created here, dropped after)."""
    with throwaway_postgres() as url:
        yield url


def _empty_postgres(url: str) -> None:
    """Empty every table of the run database (the schema stays migrated)."""
    db = open_database(url, migrate=False)
    try:
        with db.engine.begin() as conn:
            present = set(
                conn.scalars(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'"))
            )
            tables = [t.name for t in Base.metadata.sorted_tables if t.name in present]
            if tables:
                conn.execute(text(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE"))
    finally:
        db.close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The backend under test: ``sqlite`` or ``postgres``."""
    return str(request.param)


@pytest.fixture
def database_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """A URL to an empty database of the current backend (not yet migrated on SQLite)."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'arena.db'}"
        return
    url: str = request.getfixturevalue("pg_run_database")
    _empty_postgres(url)
    yield url
    _empty_postgres(url)


@pytest.fixture
def pristine_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """A URL to a database with no tables at all (for migration tests)."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'fresh.db'}"
        return
    url: str = request.getfixturevalue("pg_run_database")
    db = open_database(url, migrate=False)
    try:
        downgrade(db.engine, "base")
    finally:
        db.close()
    yield url
    # Leave the run database migrated for the tests that follow.
    open_database(url).close()


@pytest.fixture
def db(database_url: str) -> Iterator[Database]:
    """An open, migrated database of the current backend."""
    database = open_database(database_url)
    yield database
    database.close()


@pytest.fixture
def repo(db: Database) -> Repository:
    return Repository(db)


T0 = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


@pytest.fixture
def versions(repo: Repository) -> list[int]:
    """Four registered bot versions (SDK modules): their ids."""
    return [
        repo.add_bot_version(
            name,
            "1.0",
            source_kind=SourceKind.SDK_MODULE,
            location=f"client_sdk.examples.{name}",
            content_hash=f"sha256:{name}",
        ).id
        for name in ("alpha", "beta", "gamma", "delta")
    ]


class GameFactory(Protocol):
    def __call__(
        self,
        seats: Sequence[int],
        *,
        pairing_id: int | None = None,
        game_index: int = 0,
        winner: int | None = 0,
        verdict: Verdict = Verdict.NORMAL,
        offender: int | None = None,
        tournament_id: int | None = None,
    ) -> FinishedGame: ...


@pytest.fixture
def make_game() -> GameFactory:
    """Builds a plausible finished two-seat game (moves, record, timings) for given seats."""

    def build(
        seats: Sequence[int],
        *,
        pairing_id: int | None = None,
        game_index: int = 0,
        winner: int | None = 0,
        verdict: Verdict = Verdict.NORMAL,
        offender: int | None = None,
        tournament_id: int | None = None,
    ) -> FinishedGame:
        plies = 6
        moves = [
            {
                "ply": ply,
                "seat": ply % 2,
                "move": f"PLACE({ply}-0,{ply}-1,{ply}-2,{ply}-3)",
                "measured_s": 0.010 + ply / 1000,
                "reported_s": 0.008 + ply / 1000,
                "memory_bytes": 40_000_000 + ply,
            }
            for ply in range(plies)
        ]
        return FinishedGame(
            game="tetress",
            game_params={"turn_limit": 150},
            seats=[
                SeatResult(
                    bot_version_id=v,
                    time_used_s=0.05 + seat,
                    reported_think_s=0.04 + seat,
                    peak_memory_bytes=41_000_000 + seat,
                    memory_measure=MemoryMeasure.RSS_POLL,
                    stderr=f"stderr of seat {seat}\n",
                )
                for seat, v in enumerate(seats)
            ],
            verdict=verdict,
            winner_seat=winner,
            offender_seat=offender,
            plies=plies,
            reason="BLUE has no legal move; RED wins",
            termination="no_legal_move" if verdict is Verdict.NORMAL else str(verdict),
            moves=moves,
            record_text='[Game "tetress"]\n1. PLACE(0-0,0-1,0-2,0-3) ...\n',
            record_json={"game": "tetress", "moves": [m["move"] for m in moves]},
            started_at=T0 + timedelta(seconds=game_index * 10),
            finished_at=T0 + timedelta(seconds=game_index * 10 + 5),
            tournament_id=tournament_id,
            pairing_id=pairing_id,
            game_index=game_index,
        )

    return build
