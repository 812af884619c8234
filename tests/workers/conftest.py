"""A throwaway PostgreSQL database per test (the queue runs on PostgreSQL only). Skips when
the server cannot be reached, fails under ``CI=true``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import pytest


@pytest.fixture
def pg_url(throwaway_postgres: Callable[[], AbstractContextManager[str]]) -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database, dropped afterwards."""
    with throwaway_postgres() as url:
        yield url
