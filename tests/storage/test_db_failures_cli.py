"""A database failing under a ``referee`` command: one line naming the cause, exit code 2, no
traceback. A SQLite lock held past the busy timeout, a damaged file (truncated, or a page
overwritten), an unreachable PostgreSQL server. ``tournament run`` waits for a lock and tries
again before it gives up."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOTS = ("client_sdk.examples.random_bot", "client_sdk.examples.greedy_bot")
#: One attempt waits this long for the lock (ARENA_DB_BUSY_TIMEOUT_S): the tests stay short.
BUSY_S = "0.3"


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200", ARENA_DB_BUSY_TIMEOUT_S=BUSY_S)


def referee(*argv: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """One ``referee`` command, run to completion."""
    return subprocess.run(
        [sys.executable, "-m", "referee.commands.main", *argv],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=_env(),
    )  # fmt: skip


def _one_line(done: subprocess.CompletedProcess[str], prefix: str) -> str:
    """The failure's single stderr line (exit 2, nothing else, no traceback)."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix), done.stderr
    return lines[0]


@contextmanager
def write_lock(db: Path) -> Iterator[threading.Event]:
    """Hold the database's write lock from another connection until the yielded event is set
    (or the block ends)."""
    release = threading.Event()
    taken = threading.Event()

    def hold() -> None:
        conn = sqlite3.connect(db, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        taken.set()
        release.wait(300)
        conn.execute("ROLLBACK")
        conn.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert taken.wait(30)
    try:
        yield release
    finally:
        release.set()
        holder.join(30)


def _tournament(tmp_path: Path, name: str = "t") -> Path:
    db = tmp_path / "arena.db"
    done = referee("tournament", "create", name, *BOTS, "--db", str(db), "--create",
                   "--concurrency", "2")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return db


@pytest.mark.slow
def test_tournament_run_waits_for_a_locked_database(tmp_path: Path) -> None:
    """A lock held past the busy timeout when the run starts writing: the run says it waits,
    tries again, and once the lock is gone plays and stores every game."""
    db = _tournament(tmp_path)
    with write_lock(db) as release:
        run = subprocess.Popen(
            [sys.executable, "-m", "referee.commands.main", "tournament", "run", "t",
             "--db", str(db), "--no-progress"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
        )  # fmt: skip
        assert run.stderr is not None
        said = [run.stderr.readline()]
        while said[-1] and "database_locked" not in said[-1]:
            said.append(run.stderr.readline())
        assert "retry_in_s" in said[-1], said  # it found the database locked, and waits
        release.set()
    _, err = run.communicate(timeout=180)
    assert run.returncode == 0, err
    assert "Traceback" not in err
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM games WHERE verdict != 'aborted'").fetchone() == (
            2,
        )


@pytest.mark.slow
def test_a_lock_that_stays_ends_commands_with_one_line(tmp_path: Path) -> None:
    """A lock held for good: a single write gives up after the busy timeout, tournament run
    after its retries, each with one line and exit 2."""
    db = _tournament(tmp_path)
    expected = (
        f"the database {db} is locked by another process and stayed locked past the wait; try "
        "again once that process is done (database is locked)"
    )
    with write_lock(db):
        added = referee("player", "add", "bob", "--db", str(db))
        assert _one_line(added, "referee player add: ") == f"referee player add: {expected}"
        run = referee("tournament", "run", "t", "--db", str(db), "--no-progress")
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert lines[-1] == f"referee tournament run: {expected}"
    # Before giving up it said each time that it would wait and try again.
    assert sum("database_locked" in line for line in lines[:-1]) == 4


@pytest.mark.slow
def test_a_truncated_database_file(tmp_path: Path) -> None:
    """A database file cut short: run, resume and games each end with one line."""
    db = _tournament(tmp_path)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    for argv, prefix in (
        (("tournament", "run", "t"), "referee tournament run: "),
        (("tournament", "resume", "t"), "referee tournament resume: "),
        (("games",), "referee games: "),
    ):
        line = _one_line(referee(*argv, "--db", str(db)), prefix)
        assert line.endswith("database disk image is malformed"), line


@pytest.mark.slow
def test_a_damaged_page_found_after_opening(tmp_path: Path) -> None:
    """A page of one table overwritten (the file opens; the table cannot be read): the
    command that reads it ends with one line naming the damage."""
    db = _tournament(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (page,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'games'").fetchone()
        (size,) = conn.execute("PRAGMA page_size").fetchone()
    with db.open("r+b") as handle:
        handle.seek((page - 1) * size)
        handle.write(b"\xff" * size)
    line = _one_line(referee("games", "--db", str(db)), "referee games: ")
    assert line == (
        f"referee games: the database {db} is damaged or truncated: restore it from a backup "
        "(database disk image is malformed)"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [("games",), ("tournament", "run", "t"), ("player", "add", "carol"), ("serve", "--no-web")],
)
def test_an_unreachable_postgresql_server(argv: tuple[str, ...]) -> None:
    """--db naming a PostgreSQL server nobody listens for (127.0.0.1:9): one line, exit 2."""
    url = "postgresql+psycopg://postgres@127.0.0.1:9/arena"
    done = referee(*argv, "--db", url)
    line = _one_line(done, f"referee {' '.join(argv[:2]) if argv[0] != 'serve' else 'serve'}: ")
    assert "127.0.0.1" in line and "port 9" in line and "Connection refused" in line


def test_the_failure_line_names_each_cause() -> None:
    """The one place that turns database errors into a line: each cause its own sentence;
    an error that is not the database's is left alone."""
    import sqlalchemy.exc

    from referee.storage.failures import describe

    def wrapped(error: Exception) -> Exception:
        return sqlalchemy.exc.OperationalError("SELECT 1", {}, error)

    locked = describe(wrapped(sqlite3.OperationalError("database is locked")), "a.db")
    assert locked is not None and locked.startswith("the database a.db is locked")
    damaged = describe(
        sqlalchemy.exc.DatabaseError("x", {}, sqlite3.DatabaseError("file is not a database"))
    )
    assert damaged == (
        "the database is damaged or truncated: restore it from a backup (file is not a database)"
    )
    group = ExceptionGroup(
        "tasks", [ValueError("x"), wrapped(sqlite3.OperationalError("database is locked"))]
    )
    assert (describe(group) or "").startswith("the database is locked")
    assert describe(ValueError("database is locked")) is None
    assert (
        describe(sqlalchemy.exc.IntegrityError("x", {}, sqlite3.IntegrityError("UNIQUE"))) is None
    )


@pytest.mark.slow
def test_a_postgresql_server_that_never_answers_fails_fast_with_one_line() -> None:
    """--db naming a port that accepts connections but never answers (a wrong host or port
    behind a firewall that drops packets looks the same to libpq): the connect timeout
    ($ARENA_DB_CONNECT_TIMEOUT_S, here 1 s) ends the command with one line, exit 2, where it
    waited for ever."""
    import socket

    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen(16)  # the kernel completes the handshake; nobody ever reads or writes
        port = mute.getsockname()[1]
        url = f"postgresql://postgres@127.0.0.1:{port}/arena"
        done = subprocess.run(
            [sys.executable, "-m", "referee.commands.main", "games", "--db", url],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
            env={**_env(), "ARENA_DB_CONNECT_TIMEOUT_S": "1"},
        )  # fmt: skip
    line = _one_line(done, "referee games: ")
    assert f"127.0.0.1:{port}/arena" in line and "timeout expired" in line, line


@pytest.mark.parametrize("scheme", ["mysql", "mysql+pymysql", "oracle", "mssql", "nonsense"])
def test_a_database_the_referee_does_not_run_on_is_named_with_the_ones_it_does(
    scheme: str, tmp_path: Path
) -> None:
    """--db mysql://… (or any other kind) is one line naming SQLite and PostgreSQL, not a
    missing driver module."""
    from referee.commands._dbopen import DatabaseUnavailable, open_repository

    with pytest.raises(DatabaseUnavailable) as refused:
        open_repository(f"{scheme}://user@127.0.0.1/arena")
    text = str(refused.value)
    assert "No module" not in text and "\n" not in text
    assert "SQLite" in text and "PostgreSQL" in text and f"not {scheme}" in text


def test_a_postgresql_url_gets_a_connect_timeout_unless_it_has_one() -> None:
    """Every PostgreSQL URL the storage opens carries libpq's connect_timeout (the engine and
    the job queue connect with it); one the operator set is kept."""
    from referee.storage.db import DEFAULT_CONNECT_TIMEOUT_S, checked_url

    url = checked_url("postgresql+psycopg://postgres@db.example/arena")
    assert url.endswith(f"?connect_timeout={DEFAULT_CONNECT_TIMEOUT_S}")
    kept = "postgresql://postgres@db.example/arena?connect_timeout=3"
    assert checked_url(kept) == kept
    assert checked_url("sqlite:////tmp/a.db") == "sqlite:////tmp/a.db"
