"""Whole pages shared by anonymous readers: rendered once per interval, never holding a signed-in
student's data or anyone's CSRF token, answered 304 on their ETag, gzipped once; the forms
keep their CSRF protection."""

from __future__ import annotations

import asyncio
import gzip
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.testclient import TestClient
from webdata import sign_in, store_game

from referee.live.hub import LiveHub
from referee.storage import Repository
from referee.web.app import create_app
from referee.web.context import WebSettings
from referee.web.pagecache import BRIEFLY, PageCache, briefly, keep, unmarked

SECRET = b"test-secret-0123456789abcdef"


@pytest.fixture
def now() -> list[float]:
    return [100.0]


@pytest.fixture
def app(repo: Repository, hub: LiveHub, now: list[float]) -> Starlette:
    """The web front with pages kept 2 s (10 s more while rendered again) on a clock the
    test moves."""
    settings = WebSettings(
        secret=SECRET, refresh_s=0.0, analysis="off", page_cache_s=2.0, page_stale_s=10.0
    )
    made = create_app(repo, hub, settings)
    made.state.web.pages.clock = lambda: now[0]
    made.state.web.bot_pages.clock = lambda: now[0]
    return made


@pytest.fixture
def anon(app: Starlette) -> Iterator[TestClient]:
    with TestClient(app, follow_redirects=False) as c:
        yield c


def _pages(app: Starlette) -> PageCache:
    cache: PageCache = app.state.web.pages
    return cache


def test_an_anonymous_page_is_rendered_once_per_interval(
    app: Starlette, anon: TestClient, repo: Repository, ids: dict[str, Any], now: list[float]
) -> None:
    """Readers within the interval share one rendering (a game stored meanwhile is not on it
    yet); the first reader past it still gets that copy and renders the page again for the
    next; past the stale bound, a reader waits for a new rendering."""
    mine, other = (repo.get_bot_version(i) for i in ids["versions"][:2])
    first = anon.get("/games")
    assert first.status_code == 200 and _pages(app).renders == 1
    game_id = store_game(repo, mine, other, seed=11)
    now[0] += 1.9
    again = anon.get("/games")
    assert again.text == first.text and _pages(app).renders == 1
    assert f'href="/games/{game_id}"' not in again.text
    now[0] += 0.2
    assert anon.get("/games").text == first.text
    assert _pages(app).renders == 2  # after the answer
    assert f'href="/games/{game_id}"' in anon.get("/games").text
    later_id = store_game(repo, mine, other, seed=12)
    now[0] += 2.0 + 10.1
    assert f'href="/games/{later_id}"' in anon.get("/games").text
    assert _pages(app).renders == 3


def test_a_kept_page_never_shows_a_signed_in_students_data(
    app: Starlette, ids: dict[str, Any]
) -> None:
    """A signed-in student's page is theirs (name, sign-out form with their token) and never
    kept; an anonymous reader after them, and before them, gets the page without either."""
    path = f"/games/{ids['games'][0]}"
    with TestClient(app, follow_redirects=False) as student, TestClient(app) as reader:
        before = reader.get(path)
        sign_in(student, ids["token"])
        token = student.cookies.get("arena_csrf")
        assert token
        theirs = student.get(path)
        assert "alice" in theirs.text and token in theirs.text and "sign out" in theirs.text
        after = reader.get(path)
        for page in (before, after):
            assert page.status_code == 200
            assert 'id="me-link"' not in page.text and "sign out" not in page.text
            assert token not in page.text and "alpha's secret debug line" not in page.text
        assert after.text == before.text
        # The student still gets their own page, not the one kept for everyone.
        assert 'id="me-link"' in student.get(path).text


def test_a_kept_page_holds_no_csrf_token_and_sets_no_cookie(
    app: Starlette, ids: dict[str, Any]
) -> None:
    """Two anonymous readers with CSRF cookies of their own get the same page, holding neither
    token, and no cookie is set by a page without a form."""
    path = f"/bots/{ids['bots']['alpha']}"
    tokens = ("a" * 32, "b" * 32)
    pages = []
    for token in tokens:
        with TestClient(app, cookies={"arena_csrf": token}) as reader:
            pages.append(reader.get(path))
    with TestClient(app) as fresh:
        pages.append(fresh.get(path))
    assert pages[0].text == pages[1].text == pages[2].text
    for page in pages:
        assert "set-cookie" not in page.headers
        assert not any(token in page.text for token in tokens)


def test_forms_keep_their_csrf_protection(app: Starlette, ids: dict[str, Any]) -> None:
    """The sign-in page (a form) still sets the CSRF cookie and carries its token; a post
    without the token, or with another visitor's, is refused; with its own it signs in."""
    with TestClient(app, follow_redirects=False) as visitor, TestClient(app) as other:
        page = visitor.get("/signin")
        token = page.cookies.get("arena_csrf")
        assert token and f'value="{token}"' in page.text
        assert visitor.post("/signin", data={"token": ids["token"]}).status_code == 403
        other.get("/signin")
        theirs = other.cookies.get("arena_csrf")
        assert theirs and theirs != token
        forged = {"token": ids["token"], "csrf_token": theirs}
        assert visitor.post("/signin", data=forged).status_code == 403
        good = visitor.post("/signin", data={"token": ids["token"], "csrf_token": token})
        assert good.status_code == 303


def test_a_kept_page_answers_304_on_its_etag(anon: TestClient) -> None:
    """A kept page has an ETag and is revalidated (no-cache) per Cookie and encoding; asking
    with that ETag gets a bodiless 304, with another a full page."""
    first = anon.get("/leaderboard/tetress")
    tag = first.headers["etag"]
    assert tag.startswith('W/"') and first.headers["cache-control"] == "no-cache"
    assert first.headers["vary"] == "Cookie, Accept-Encoding"
    again = anon.get("/leaderboard/tetress", headers={"if-none-match": tag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == tag
    other = anon.get("/leaderboard/tetress", headers={"if-none-match": 'W/"another"'})
    assert other.status_code == 200 and other.text == first.text


def test_a_kept_page_is_gzipped_once_and_plain_for_who_asks(
    app: Starlette, anon: TestClient
) -> None:
    """A reader accepting gzip gets the kept page compressed, one that does not gets the same
    page plain; both from one rendering."""
    zipped = anon.get("/leaderboard/tetress", headers={"accept-encoding": "gzip"})
    plain = anon.get("/leaderboard/tetress", headers={"accept-encoding": "identity"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert "content-encoding" not in plain.headers
    assert zipped.text == plain.text and _pages(app).renders == 1


def test_a_fragment_and_its_page_are_kept_apart(app: Starlette, anon: TestClient) -> None:
    """The leaderboard's htmx fragment and its full page are two kept pages."""
    fragment = anon.get("/leaderboard/tetress", headers={"hx-request": "true"})
    page = anon.get("/leaderboard/tetress")
    assert "<html" not in fragment.text and "<html" in page.text
    assert anon.get("/leaderboard/tetress", headers={"hx-request": "true"}).text == fragment.text
    assert _pages(app).renders == 2


def test_errors_and_pages_setting_cookies_are_never_kept() -> None:
    """Only a 200 without Set-Cookie is kept."""
    page = HTMLResponse("x" * 2000)
    assert keep(page, 2.0, 0.0) is not None
    assert keep(HTMLResponse("gone", status_code=404), 2.0, 0.0) is None
    cookie = HTMLResponse("x" * 2000)
    cookie.set_cookie("arena_csrf", "t" * 32)
    assert keep(cookie, 2.0, 0.0) is None
    kept = keep(page, 2.0, 0.0)
    assert kept is not None and kept.compressed and gzip.decompress(kept.body) == b"x" * 2000


@pytest.mark.asyncio
async def test_readers_of_a_page_being_rendered_wait_for_that_one_rendering() -> None:
    """A second reader arriving while a page renders gets that rendering, not another."""
    cache = PageCache(2.0)
    started, release = threading.Event(), threading.Event()
    calls: list[str] = []

    def handler(request: Request) -> Response:
        calls.append(request.url.path)
        started.set()
        assert release.wait(30)
        return HTMLResponse("page " * 500)

    def request() -> Request:
        headers = [(b"host", b"testserver"), (b"cookie", b"arena_csrf=" + b"c" * 32)]
        return Request({"type": "http", "method": "GET", "path": "/p", "headers": headers})

    first = asyncio.create_task(cache.serve(request(), handler))
    assert await asyncio.to_thread(started.wait, 30)
    second = asyncio.create_task(cache.serve(request(), handler))
    await asyncio.sleep(0)
    release.set()
    one, two = await asyncio.gather(first, second)
    assert one.body == two.body and calls == ["/p"] and cache.renders == 1


def test_a_page_marked_brief_is_kept_for_the_short_interval_and_never_says_so() -> None:
    """A page its handler marks (a game whose evaluation is being computed) is kept for the
    cache's short interval instead of its route's, and the mark is not sent."""
    kept = keep(briefly(HTMLResponse("x" * 2000)), 30.0, 100.0, brief_s=2.0)
    assert kept is not None and kept.expires == 102.0
    assert all(name != BRIEFLY for name, _ in kept.headers)
    plain = keep(HTMLResponse("x" * 2000), 30.0, 100.0, brief_s=2.0)
    assert plain is not None and plain.expires == 130.0
    assert BRIEFLY not in unmarked(briefly(HTMLResponse("y"))).headers
