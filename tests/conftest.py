"""Fixtures shared by every test folder.

PostgreSQL: tests that need it use the server at 127.0.0.1:5432 (trust authentication, user
``postgres``; override with ``ARENA_TEST_PG_ADMIN_URL``) and a throwaway database of their own,
created through the ``postgres`` database and dropped afterwards. If the server cannot be
reached they skip with the reason, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

import psycopg
import pytest
from psycopg import sql
from sqlalchemy.engine import make_url

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
