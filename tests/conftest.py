"""Fixtures shared by every test folder.

PostgreSQL: tests that need it use the server at 127.0.0.1:5432 (trust authentication, user
``postgres``; override with ``ARENA_TEST_PG_ADMIN_URL``) and a throwaway database of their own,
created through the ``postgres`` database and dropped afterwards. If the server cannot be
reached they skip with the reason, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import _posixsubprocess
import os
import secrets
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import psycopg
import pytest
from psycopg import sql
from sqlalchemy.engine import make_url

# pytest caches its assertion-rewritten test modules as bytecode, but not where the
# environment asks for no bytecode (PYTHONDONTWRITEBYTECODE): then every worker of every run
# rewrites all of them again, about 6 s of CPU each. The cache is pytest's own, under tests/.
sys.dont_write_bytecode = False

PG_ADMIN_URL = os.environ.get(
    "ARENA_TEST_PG_ADMIN_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


@contextmanager
def _throwaway_database() -> Iterator[str]:
    libpq = make_url(PG_ADMIN_URL).set(drivername="postgresql")
    try:
        admin = psycopg.connect(
            libpq.render_as_string(hide_password=False), autocommit=True, connect_timeout=5
        )
    except psycopg.OperationalError as exc:
        message = f"PostgreSQL not reachable at {make_url(PG_ADMIN_URL)!r}: {exc}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{message} (CI=true: the PostgreSQL tests must run)")
        pytest.skip(message)
    name = f"arena_test_{secrets.token_hex(6)}"
    with admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            yield make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
        finally:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture(scope="session")
def throwaway_postgres() -> Callable[[], AbstractContextManager[str]]:
    """Makes throwaway PostgreSQL databases: ``with throwaway_postgres() as url: ...``."""
    return _throwaway_database


@pytest.fixture(scope="session", autouse=True)
def _no_inherited_columns() -> Iterator[None]:
    """pytest-xdist's workers get ``COLUMNS=80``, which a plain run does not: the CLI lays out
    piped tables for ``$COLUMNS``, so it is dropped and tests set it where they mean it."""
    before = os.environ.pop("COLUMNS", None)
    yield
    if before is not None:
        os.environ["COLUMNS"] = before


@pytest.fixture(scope="session", autouse=True)
def _token_keys_in_a_test_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The token key of a non-file database (PostgreSQL) lives under ``$XDG_CONFIG_HOME``
    (referee/storage/secret.py): point it at a folder of this run, never the user's home."""
    before = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("config"))
    yield
    if before is None:
        os.environ.pop("XDG_CONFIG_HOME", None)
    else:
        os.environ["XDG_CONFIG_HOME"] = before


@pytest.fixture(autouse=True)
def _logs_written_within_their_test() -> Iterator[None]:
    """Lines a test logged on an event loop are written before the next test begins: the log
    writer's thread writes them a moment later (on a loaded machine, much later), and the
    next configuration of the logs writes what is left first, into whichever test's captured
    stderr is current then (seen: three "session_closed" lines in a CLI test's one-line
    output)."""
    yield
    from referee.telemetry import logs

    logs.flush()


@pytest.fixture
def info_logs() -> Iterator[None]:
    """Events from ``info`` up reach ``structlog.testing.capture_logs`` in this test, whatever
    level an earlier test in this interpreter configured (that level is restored after)."""
    import logging

    import structlog

    saved = structlog.get_config()["wrapper_class"]
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.INFO))
    yield
    structlog.configure(wrapper_class=saved)


# -- the `slow` marker: every test that starts a process carries it --------------------------
#
# `pytest -m "not slow"` is the quick loop (CONTRIBUTING.md). Starting processes (bots, the
# `referee` command, fresh interpreters) is what makes a test slow, so the rule is enforced
# here rather than remembered: a test without the marker that starts a process fails.

# Importing the job queue's library starts a process once per interpreter (croniter asks
# `file` for the interpreter's architecture): done here, before any test runs, so whichever
# quick test first imports the queue in this worker is not charged with that process.
import croniter  # noqa: E402, F401

_running: list[str] = []
_spawned: dict[str, str] = {}


def _owner() -> str | None:
    """The test a process started now is charged to: the running test when the main thread
    starts it, else the test that was running when the starting thread was started."""
    thread = threading.current_thread()
    if thread is threading.main_thread():
        return _running[-1] if _running else None
    owner: str | None = getattr(thread, "_arena_test", None)
    return owner


def _noting(spawn: Callable[..., Any], what: str) -> Callable[..., Any]:
    def noted(*args: Any, **kwargs: Any) -> Any:
        # A thread can outlive the test that started it (a server's executor, the daemon
        # "analysis" thread that analyses stored games in a child process): its children are
        # charged to the test that started it, not to whichever test this worker runs next.
        owner = _owner()
        if (
            owner is not None
            and threading.current_thread().name != "analysis"
            and owner not in _spawned
        ):
            # Where it came from, for the failure's message: a rare spawn is found from it.
            where = "".join(traceback.format_stack(limit=12)[:-1])
            _spawned[owner] = f"{what} in thread {threading.current_thread().name!r}:\n{where}"
        return spawn(*args, **kwargs)

    return noted


_thread_start = threading.Thread.start


def _start_noting_owner(self: threading.Thread) -> None:
    self._arena_test = _owner()  # type: ignore[attr-defined]
    _thread_start(self)


threading.Thread.start = _start_noting_owner  # type: ignore[method-assign]
subprocess._fork_exec = _noting(subprocess._fork_exec, "subprocess")  # type: ignore[attr-defined]
_posixsubprocess.fork_exec = _noting(_posixsubprocess.fork_exec, "subprocess")
os.fork = _noting(os.fork, "os.fork")
os.posix_spawn = _noting(os.posix_spawn, "os.posix_spawn")
os.posix_spawnp = _noting(os.posix_spawnp, "os.posix_spawnp")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    _running.append(item.nodeid)
    try:
        yield
    finally:
        _running.pop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    how = _spawned.get(item.nodeid)
    if (
        call.when == "teardown"
        and how
        and report.passed
        and item.get_closest_marker("slow") is None
    ):
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} started a process but is not marked slow: add "
            "@pytest.mark.slow (process-spawning tests stay out of `pytest -m 'not slow'`); "
            f"it was started by {how}"
        )
