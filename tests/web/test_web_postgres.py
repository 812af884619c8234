"""The web front's queries on PostgreSQL: the same pages over the real server."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest
from starlette.testclient import TestClient
from webdata import populate

from referee.live.hub import LiveHub
from referee.storage import Repository
from referee.storage.browse import data_mark, played_games, recent_games, version_names
from referee.web.app import create_app
from referee.web.context import WebSettings


@pytest.mark.postgres
@pytest.mark.slow
def test_pages_and_queries_on_postgres(
    throwaway_postgres: Callable[[], AbstractContextManager[str]],
) -> None:
    """Leaderboard, bot, game and tournament pages, and the browse queries, on PostgreSQL."""
    with throwaway_postgres() as url:
        ids = populate(url, games=4)
        repo = Repository.open(url)
        try:
            assert data_mark(repo) == (max(ids["games"]), 6, max(ids["versions"]))
            assert len(played_games(repo)) == 6
            assert [g.id for g in recent_games(repo, limit=2)] == ids["games"][-1:-3:-1]
            assert version_names(repo)[ids["versions"][0]].display == "alpha"
            app = create_app(repo, LiveHub(), WebSettings(secret=b"postgres-test-secret-123"))
            with TestClient(app) as client:
                board = client.get("/api/leaderboard/tetress").json()
                assert board["games"] == 4
                for path in (
                    f"/bots/{ids['bots']['alpha']}",
                    f"/games/{ids['games'][0]}",
                    f"/tournaments/{ids['tournament']}",
                ):
                    assert client.get(path).status_code == 200, path
        finally:
            repo.close()
