"""One author's bots are linked on the pages (a student's remote bot and their upload are
separate bots), and a bot has no head to head with itself."""

from __future__ import annotations

import re
from typing import Any

from starlette.testclient import TestClient
from webdata import store_game

from referee.storage import Repository, SourceKind


def test_an_authors_remote_and_uploaded_bots_link_to_each_other(
    repo: Repository, ids: dict[str, Any], client: TestClient
) -> None:
    """alice's remote bot and her upload each name and link the other on the leaderboard and
    on their pages (with which is remote and which uploaded), and in the bot's JSON; bob's
    bots are not linked to hers."""
    upload = repo.add_bot_version(
        "alice-upload", "v1", source_kind=SourceKind.PACKAGE, location="-", owner="alice"
    )
    beta = repo.get_bot_version(ids["versions"][1])
    store_game(repo, upload, beta, seed=5)
    alpha = ids["bots"]["alpha"]
    board = client.get("/leaderboard/tetress").text
    rows = re.findall(r'<tr data-group="\d+">(.*?)</tr>', board, re.S)
    cells = {}
    for row in rows:
        found = re.search(r'href="/bots/(\d+)"', row)
        assert found is not None
        cells[found.group(1)] = row
    linked = f'class="author">alice\'s other bot: <a href="/bots/{upload.bot_id}"'
    assert linked in cells[str(alpha)]
    assert f'<a href="/bots/{alpha}">alpha</a>' in cells[str(upload.bot_id)]
    beta_row = cells[str(ids["bots"]["beta"])]
    assert "bob's other bot" in beta_row and f"/bots/{upload.bot_id}" not in beta_row
    page = client.get(f"/bots/{alpha}").text
    author = re.search(r'<p class="note" id="author">(.*?)</p>', page, re.S)
    assert author is not None
    assert f'<a href="/bots/{upload.bot_id}">alice-upload</a> (uploaded)' in author.group(1)
    theirs = client.get(f"/bots/{upload.bot_id}").text
    assert f'<a href="/bots/{alpha}">alpha</a> (remote)' in theirs
    data = client.get(f"/api/bots/{alpha}").json()
    assert data["same_author"] == [
        {"bot_id": upload.bot_id, "bot": "alice-upload", "kind": "uploaded"}
    ]


def test_a_bot_against_itself_is_refused(client: TestClient, ids: dict[str, Any]) -> None:
    """``/bots/N/vs/N`` is a 404 saying why (page and JSON), and a bot's matchup with its
    own versions offers no head-to-head link."""
    alpha = ids["bots"]["alpha"]
    page = client.get(f"/bots/{alpha}/vs/{alpha}")
    assert page.status_code == 404 and "with itself" in page.text
    api = client.get(f"/api/bots/{alpha}/vs/{alpha}")
    assert api.status_code == 404 and "with itself" in api.json()["error"]
    assert f"/bots/{alpha}/vs/{alpha}" not in client.get(f"/bots/{alpha}").text
