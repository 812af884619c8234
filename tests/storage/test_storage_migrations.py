"""Migrations, schema drift and the per-backend connection settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from referee.storage import Repository, open_database
from referee.storage.db import (
    ENV_VAR,
    current_revision,
    default_url,
    downgrade,
    head_revision,
    upgrade,
)
from referee.storage.models import Base


def test_migrations_build_the_schema_from_empty(pristine_url: str) -> None:
    """Opening an empty database migrates it to head and creates every model's table."""
    db = open_database(pristine_url, migrate=False)
    try:
        assert current_revision(db.engine) is None
        assert not set(inspect(db.engine).get_table_names()) & set(Base.metadata.tables)
        upgrade(db.engine)
        assert current_revision(db.engine) == head_revision()
        assert set(Base.metadata.tables) <= set(inspect(db.engine).get_table_names())
    finally:
        db.close()


def test_migrations_go_down_to_empty_and_up_again(pristine_url: str) -> None:
    """Downgrading to base removes every table and upgrading again restores them."""
    db = open_database(pristine_url)
    try:
        downgrade(db.engine, "base")
        assert current_revision(db.engine) is None
        assert not set(inspect(db.engine).get_table_names()) & set(Base.metadata.tables)
        upgrade(db.engine)
        assert current_revision(db.engine) == head_revision()
    finally:
        db.close()


def test_models_and_migrations_do_not_drift(pristine_url: str) -> None:
    """Alembic's autogenerate finds nothing to change after migrating to head: every model
    change has its migration."""
    db = open_database(pristine_url)
    try:
        with db.engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            diff = compare_metadata(context, Base.metadata)
        assert diff == []
    finally:
        db.close()


def test_opening_twice_is_a_no_op(database_url: str) -> None:
    """Re-opening a migrated database keeps its data (migration to head is idempotent)."""
    with open_database(database_url) as db:
        Repository(db).create_player("ann")
    with open_database(database_url) as db:
        assert Repository(db).get_player("ann").name == "ann"
        assert current_revision(db.engine) == head_revision()


def test_sqlite_file_is_created_on_first_use_in_wal_mode(tmp_path: Path) -> None:
    """A plain path names a SQLite file, created (with its folder) on first use, in WAL
    journal mode with foreign keys enforced."""
    path = tmp_path / "nested" / "dir" / "arena.db"
    with open_database(path) as db:
        assert path.exists()
        with db.engine.connect() as conn:
            assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1


def test_sqlite_enforces_foreign_keys(tmp_path: Path) -> None:
    """A row pointing at a missing parent is refused (SQLite ignores foreign keys unless
    asked on every connection)."""
    with open_database(tmp_path / "fk.db") as db, pytest.raises(IntegrityError), db.write() as s:
        s.execute(
            text(
                "INSERT INTO bot_versions (bot_id, version, source_kind, location, created_at) "
                "VALUES (999, '1', 'command', 'x', '2026-01-01 00:00:00')"
            )
        )


def test_default_url_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``$ARENA_DATABASE_URL`` wins; otherwise ``arena.db`` in the working directory."""
    monkeypatch.setenv(ENV_VAR, "postgresql+psycopg://someone@db.example:5432/arena")
    assert default_url() == "postgresql+psycopg://someone@db.example:5432/arena"
    monkeypatch.delenv(ENV_VAR)
    monkeypatch.chdir(tmp_path)
    assert default_url() == f"sqlite:///{tmp_path.resolve() / 'arena.db'}"
    with open_database() as db:
        Repository(db).create_player("default")
    assert (tmp_path / "arena.db").exists()


def test_schema_head_constant_matches_the_scripts() -> None:
    """The revision ``open_database`` trusts without Alembic is the scripts' real head."""
    from referee.storage.db import SCHEMA_HEAD

    assert head_revision() == SCHEMA_HEAD


@pytest.mark.slow
def test_opening_a_current_database_does_not_load_alembic(tmp_path: Path) -> None:
    """Importing the storage package and opening a database already at head stays light
    (no Alembic import), which keeps CLI calls quick; an outdated one is migrated."""
    import subprocess
    import sys

    path = tmp_path / "light.db"
    open_database(path).close()
    code = (
        "import sys\n"
        "from referee.storage import Repository, open_database\n"
        "Repository(open_database(sys.argv[1])).list_players()\n"
        "print('alembic' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run(
        [sys.executable, "-c", code, str(path)], cwd=root, capture_output=True, text=True
    )
    assert run.stdout.strip() == "False", run.stderr
    with open_database(path) as db:
        downgrade(db.engine, "base")
    run = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "light.db")],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert run.stdout.strip() == "True", run.stderr


def test_migrations_ship_inside_the_package() -> None:
    """The migration scripts live in the Python package, so an installed copy can migrate
    without an alembic.ini."""
    import referee.storage

    package = Path(referee.storage.__file__).parent
    assert (package / "migrations" / "env.py").exists()
    assert list((package / "migrations" / "versions").glob("0001_*.py"))
    assert head_revision() is not None


@pytest.mark.slow
@pytest.mark.parametrize(
    ("ci", "expected_exit", "expected_word"),
    [("true", 1, "1 passed, 1 error"), ("", 0, "1 passed, 1 skipped")],
    ids=["ci", "local"],
)
def test_unreachable_postgres_fails_under_ci(
    ci: str, expected_exit: int, expected_word: str
) -> None:
    """With PostgreSQL unreachable, its tests fail when CI=true and skip (with the reason)
    otherwise."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "CI": ci,
        # Port 9 (discard) on loopback: nothing listens there.
        "ARENA_TEST_PG_ADMIN_URL": "postgresql+psycopg://postgres@127.0.0.1:9/postgres",
    }
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            # One test: in this process, not the suite's four workers.
            "-n",
            "0",
            "-rs",
            "tests/storage/test_storage_catalog.py::test_rating_snapshots",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == expected_exit, run.stdout
    assert expected_word in run.stdout
    assert "PostgreSQL not reachable" in run.stdout
    assert ("CI=true: the PostgreSQL tests must run" in run.stdout) == (ci == "true")
