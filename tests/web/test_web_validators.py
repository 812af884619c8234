"""Stored games' pages and records carry validators (ETag, Last-Modified), answer 304 when
the reader's copy is current, are cached long only where nothing can change, and are gzipped."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient
from webdata import sign_in


def test_a_record_answers_304_on_its_etag_and_is_cached_for_long(
    client: TestClient, ids: dict[str, Any]
) -> None:
    """An anonymous reader's PGN record of a ladder game has an ETag and a Last-Modified;
    asking again with If-None-Match (or If-Modified-Since) gets a bodiless 304; shared caches
    may keep it, but not a record of an open tournament's game (its close shows more)."""
    in_open_tournament = client.get(f"/games/{ids['games'][0]}/record.pgn")
    assert in_open_tournament.headers["cache-control"] == "private, no-cache"
    path = f"/games/{ids['games'][3]}/record.pgn"
    first = client.get(path)
    assert first.status_code == 200 and first.text.startswith("[Event")
    tag, modified = first.headers["etag"], first.headers["last-modified"]
    assert tag.startswith('W/"') and modified.endswith("GMT")
    assert "immutable" in first.headers["cache-control"]
    again = client.get(path, headers={"if-none-match": tag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == tag
    assert client.get(path, headers={"if-modified-since": modified}).status_code == 304
    stale = client.get(path, headers={"if-none-match": 'W/"not-this-one"'})
    assert stale.status_code == 200 and stale.text == first.text


def test_a_game_page_revalidates_and_a_signed_in_reader_is_never_shared(
    client: TestClient, ids: dict[str, Any]
) -> None:
    """The game page is private and revalidated: the same reader asking again with its ETag
    gets a 304; a signed-in reader's record is private too."""
    page = f"/games/{ids['games'][0]}"
    first = client.get(page)
    assert first.status_code == 200 and first.headers["cache-control"] == "private, no-cache"
    assert client.get(page, headers={"if-none-match": first.headers["etag"]}).status_code == 304
    sign_in(client, ids["token"])
    record = client.get(f"/api/games/{ids['games'][0]}")
    assert record.status_code == 200 and record.headers["cache-control"] == "private, no-cache"


def test_pages_and_records_are_gzipped(client: TestClient, ids: dict[str, Any]) -> None:
    """A client accepting gzip gets the leaderboard and a game's JSON record compressed."""
    for path in ("/leaderboard/tetress", f"/games/{ids['games'][0]}/record.json"):
        response = client.get(path, headers={"accept-encoding": "gzip"})
        assert response.status_code == 200, path
        assert response.headers.get("content-encoding") == "gzip", path
        assert response.content  # httpx decoded it
