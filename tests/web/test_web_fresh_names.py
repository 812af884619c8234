"""A game stored a moment ago names its players everywhere it is shown, although the tables'
snapshot (rebuilt in the background, at most once a second) was built before its bot
registered: the game's page, its API row and the games list read the missing names."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient
from webdata import store_game

from referee.storage import Repository, SourceKind


def test_a_bot_that_registered_after_the_snapshot_is_named_in_its_first_game(
    client: TestClient, repo: Repository, ids: dict[str, Any]
) -> None:
    """carol's new bot and its first game, stored after the snapshot: every view names her."""
    assert client.get("/api/games").status_code == 200  # the snapshot is built here
    repo.create_player("carol")
    newcomer = repo.add_bot_version(
        "gamma", "v1", source_kind=SourceKind.REMOTE, location="-", owner="carol"
    )
    game_id = store_game(repo, newcomer, repo.get_bot_version(ids["versions"][0]), seed=5)

    detail = client.get(f"/api/games/{game_id}").json()
    assert [p.get("owner") for p in detail["players"]] == ["carol", "alice"]
    assert detail["players"][0]["bot"] == "gamma"
    (line,) = [g for g in client.get("/api/games").json() if g["id"] == game_id]
    assert line["seats"][0]["owner"] == "carol" and line["seats"][0]["bot"] == "gamma"
    listed = client.get("/games").text
    assert "gamma" in listed
    assert "gamma" in client.get(f"/games/{game_id}").text
