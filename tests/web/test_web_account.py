"""Signing in, sessions, CSRF, the body limit and who sees whose output."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient
from webdata import sign_in

from referee.live.hub import LiveHub
from referee.storage import Repository
from referee.web.app import create_app
from referee.web.context import WebSettings
from referee.web.security import Session, Signer


def test_sign_in_sets_a_safe_session_cookie(client: TestClient, ids: dict[str, Any]) -> None:
    """A good token gives a signed HttpOnly SameSite session cookie and the student's page."""
    response = sign_in(client, ids["token"])
    assert response.status_code == 303 and response.headers["location"] == "/me"
    cookie = next(h for h in response.headers.get_list("set-cookie") if "arena_session=" in h)
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert ids["token"] not in cookie
    page = client.get("/me")
    assert page.status_code == 200 and "alice" in page.text
    assert ids["token"] not in page.text
    assert client.get("/api/me").json()["player"] == "alice"


def test_cookies_are_secure_over_https(repo: Repository, settings: WebSettings, ids: Any) -> None:
    """Over HTTPS the session and CSRF cookies carry Secure, and HSTS is sent."""
    with TestClient(
        create_app(repo, LiveHub(), settings), base_url="https://testserver", follow_redirects=False
    ) as c:
        page = c.get("/signin")
        assert "Secure" in page.headers["set-cookie"]
        assert "strict-transport-security" in page.headers
        response = sign_in(c, ids["token"])
        assert all("Secure" in h for h in response.headers.get_list("set-cookie"))


def test_wrong_token_is_refused(client: TestClient) -> None:
    """A wrong token gets 401 and no session."""
    response = sign_in(client, "arena_0000000000000000_nope")
    assert response.status_code == 401
    assert "arena_session" not in response.headers.get("set-cookie", "")
    assert client.get("/me").status_code == 303


def test_sign_in_without_csrf_token_is_refused(client: TestClient, ids: dict[str, Any]) -> None:
    """A form posted without (or with a wrong) CSRF token is refused with 403."""
    client.get("/signin")
    assert client.post("/signin", data={"token": ids["token"]}).status_code == 403
    wrong = client.post("/signin", data={"token": ids["token"], "csrf_token": "x" * 32})
    assert wrong.status_code == 403


def test_failed_sign_ins_are_throttled(client: TestClient, ids: dict[str, Any]) -> None:
    """After ten failed sign-ins from one address even a good token waits (429)."""
    for _ in range(10):
        assert sign_in(client, "bad").status_code == 401
    assert sign_in(client, ids["token"]).status_code == 429


def test_forged_or_expired_session_is_signed_out(client: TestClient, ids: dict[str, Any]) -> None:
    """A session cookie signed with another secret, or expired, is ignored."""
    other = Signer(b"some-other-secret-entirely!!")
    client.cookies.set("arena_session", other.session_cookie(Session(ids["alice"], "alice", 9e9)))
    assert client.get("/me").status_code == 303
    mine = Signer(b"test-secret-0123456789abcdef")
    client.cookies.set("arena_session", mine.session_cookie(Session(ids["alice"], "alice", 1.0)))
    assert client.get("/api/me").status_code == 401
    client.cookies.set("arena_session", mine.session_cookie(Session(ids["alice"], "alice", 9e9)))
    assert client.get("/api/me").status_code == 200


def test_not_signed_in_gets_no_private_pages(client: TestClient) -> None:
    """/me sends to the sign-in page, /api/me is 401, uploads are 401."""
    assert client.get("/me").headers["location"] == "/signin"
    assert client.get("/api/me").status_code == 401
    assert client.get("/me/submissions").status_code == 401
    assert client.post("/me/upload", files={"archive": ("a.zip", b"PK")}).status_code == 401


def test_sign_out_needs_csrf_and_ends_the_session(client: TestClient, ids: dict[str, Any]) -> None:
    """Signing out is a CSRF-checked POST that clears the session cookie."""
    sign_in(client, ids["token"])
    assert client.post("/signout").status_code == 403
    response = client.post("/signout", data={"csrf_token": client.cookies.get("arena_csrf")})
    assert response.status_code == 303
    assert client.get("/api/me").status_code == 401


def test_own_output_is_shown_to_its_owner_only(client: TestClient, ids: dict[str, Any]) -> None:
    """alice sees her bot's stderr on her game's page; signed out, or as another player, no
    output is shown; bob's bot's output is never shown to alice."""
    game = ids["games"][0]  # alpha (alice) vs beta (bob)
    assert "secret debug line" not in client.get(f"/games/{game}").text
    sign_in(client, ids["token"])
    page = client.get(f"/games/{game}").text
    assert "alpha&#39;s secret debug line 0" in page
    assert "other output 0" not in page


def test_upload_over_the_limit_is_refused_before_the_body_is_read(
    client: TestClient, ids: dict[str, Any]
) -> None:
    """A declared body over the limit is a 413 at once; a chunked one is cut off at the limit."""
    sign_in(client, ids["token"])
    big = b"x" * (3 * 1024 * 1024)
    response = client.post(
        "/me/upload", content=big, headers={"content-type": "application/octet-stream"}
    )
    assert response.status_code == 413

    def chunks() -> Any:
        for _ in range(40):
            yield b"y" * (128 * 1024)

    multipart = {"content-type": "multipart/form-data; boundary=b0undary"}
    response = client.post("/me/upload", content=chunks(), headers=multipart)
    assert response.status_code == 413
    assert client.post("/signin", content=b"t" * 100_000).status_code == 413


def test_upload_without_the_service_says_so(client: TestClient, ids: dict[str, Any]) -> None:
    """Without a submission service the upload answers 503 (after the CSRF check)."""
    sign_in(client, ids["token"])
    csrf = client.cookies.get("arena_csrf")
    missing = client.post("/me/upload", files={"archive": ("bot.zip", b"PK\x03\x04")})
    assert missing.status_code == 403
    response = client.post(
        "/me/upload", data={"csrf_token": csrf}, files={"archive": ("bot.zip", b"PK\x03\x04")}
    )
    assert response.status_code == 503
    assert "Uploads are not available" in client.get("/me").text


def test_failure_pack_is_linked_and_served_to_its_owner_only(
    client: TestClient, ids: dict[str, Any]
) -> None:
    """The game page links alice's own seat's failure pack and serves it to her; signed out
    nobody gets a link or the pack, and the other seat's pack is refused to her."""
    game = ids["games"][0]  # alpha (alice) in seat 0 vs beta (bob)
    assert "failure pack" not in client.get(f"/games/{game}").text
    assert client.get(f"/games/{game}/pack/0").status_code == 404
    sign_in(client, ids["token"])
    page = client.get(f"/games/{game}").text
    assert f'href="/games/{game}/pack/0"' in page and f"/games/{game}/pack/1" not in page
    mine = client.get(f"/games/{game}/pack/0")
    assert mine.status_code == 200 and "alpha's pack 0" in mine.text
    assert "attachment" in mine.headers["content-disposition"]
    theirs = client.get(f"/games/{game}/pack/1")
    assert theirs.status_code == 404 and "beta" not in theirs.text
