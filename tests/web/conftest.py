"""Fixtures for the web tests: one populated SQLite file per session, an app over it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from webdata import populate, site_copy, web_front

from referee.live.hub import LiveHub
from referee.storage import Repository
from referee.web.app import create_app
from referee.web.context import WebSettings


@pytest.fixture(scope="session")
def site_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("web") / "site.db"
    return path, populate(path)


@pytest.fixture
def site(site_template: tuple[Path, dict[str, Any]], tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A private copy of the populated database (tests may add games to it)."""
    path, ids = site_template
    copy = tmp_path / "site.db"
    shutil.copy(path, copy)
    # The token key beside the database goes with it (tokens are hashed under it).
    shutil.copy(path.with_name("site.db.token-key"), tmp_path / "site.db.token-key")
    return copy, ids


@pytest.fixture
def repo(site: tuple[Path, dict[str, Any]]) -> Iterator[Repository]:
    repository = Repository.open(str(site[0]))
    yield repository
    repository.close()


@pytest.fixture
def ids(site: tuple[Path, dict[str, Any]]) -> dict[str, Any]:
    return site[1]


@pytest.fixture
def hub() -> LiveHub:
    return LiveHub()


@pytest.fixture
def settings() -> WebSettings:
    # No reference evaluations in the background (tests that need one ask for it).
    return WebSettings(secret=b"test-secret-0123456789abcdef", refresh_s=0.0, analysis="off")


@pytest.fixture
def client(repo: Repository, hub: LiveHub, settings: WebSettings) -> Iterator[TestClient]:
    with TestClient(create_app(repo, hub, settings), follow_redirects=False) as c:
        yield c


@pytest.fixture(scope="module")
def site_url(site_template: tuple[Path, dict[str, Any]], tmp_path_factory: Any) -> Iterator[Any]:
    """``referee web`` over a copy of the populated database."""
    db = site_copy(site_template, tmp_path_factory.mktemp("web-front"))
    with web_front(db) as url:
        yield url, site_template[1]
