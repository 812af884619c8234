"""Signing in with a token, the student's own page, signing out.

A token is exchanged once for a signed session cookie (``HttpOnly``, ``SameSite=Lax``,
``Secure`` over HTTPS); the token itself is never stored in the browser. Every form carries the
double-submit CSRF token. Failed sign-ins are limited per client address.
"""

from __future__ import annotations

import time
from collections import deque
from typing import TypedDict

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from referee.storage.browse import (
    GameLine,
    VersionName,
    bot_ids_owned_by,
    recent_games,
    version_names,
)
from referee.web.context import CSRF_COOKIE, SESSION_COOKIE, Web, web_of
from referee.web.security import Session, csrf_ok, new_csrf_token

#: Failed sign-ins allowed per client address per window.
FAILED_SIGNINS = 10
FAILED_WINDOW_S = 60.0
MAX_TOKEN_CHARS = 200


class SigninLimiter:
    """Counts failed sign-ins per client address in a sliding window."""

    def __init__(self, limit: int = FAILED_SIGNINS, window: float = FAILED_WINDOW_S) -> None:
        self.limit = limit
        self.window = window
        self._failures: dict[str, deque[float]] = {}

    def blocked(self, client: str) -> bool:
        seen = self._failures.get(client)
        if not seen:
            return False
        cutoff = time.monotonic() - self.window
        while seen and seen[0] < cutoff:
            seen.popleft()
        if not seen:
            del self._failures[client]
        return len(seen) >= self.limit

    def failed(self, client: str) -> None:
        if len(self._failures) > 10_000:
            self._failures.clear()
        self._failures.setdefault(client, deque()).append(time.monotonic())


async def checked_form(request: Request) -> dict[str, str]:
    """The form's text fields, after the CSRF check (403 when it fails)."""
    form = await request.form(max_files=0, max_fields=20)
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    if not csrf_ok(request.cookies.get(CSRF_COOKIE), fields.get("csrf_token")):
        raise HTTPException(403, "the form's CSRF token is missing or wrong: reload the page")
    return fields


def signin_page(request: Request) -> Response:
    return web_of(request).render(request, "signin.html", {"error": None})


async def signin(request: Request) -> Response:
    web = web_of(request)
    fields = await checked_form(request)
    limiter: SigninLimiter = request.app.state.signin_limiter
    client = request.client.host if request.client else "?"
    if limiter.blocked(client):
        return web.render(
            request, "signin.html", {"error": "Too many failed sign-ins; wait a minute."}, 429
        )
    token = fields.get("token", "").strip()
    repo = web.need_repo()
    owner = None
    if token and len(token) <= MAX_TOKEN_CHARS:
        import asyncio

        owner = await asyncio.to_thread(repo.resolve_token, token)
    if owner is None:
        limiter.failed(client)
        return web.render(request, "signin.html", {"error": "That token is not valid."}, 401)
    player = owner.player
    expires = time.time() + web.settings.session_hours * 3600
    session = Session(player.id, player.name, expires, str(owner.role))
    response = RedirectResponse("/me", status_code=303)
    _set_session(web, request, response, session)
    return response


def _set_session(web: Web, request: Request, response: Response, session: Session) -> None:
    secure = web.secure(request)
    response.set_cookie(
        SESSION_COOKIE,
        web.signer.session_cookie(session),
        max_age=int(web.settings.session_hours * 3600),
        httponly=True,
        samesite="lax",
        secure=secure,
        path="/",
    )
    # A fresh CSRF token for the signed-in session (no fixation across the sign-in).
    response.set_cookie(
        CSRF_COOKIE, new_csrf_token(), httponly=True, samesite="strict", secure=secure, path="/"
    )


async def signout(request: Request) -> Response:
    await checked_form(request)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


def require_session(request: Request) -> Session:
    session = web_of(request).session(request)
    if session is None:
        raise HTTPException(401, "sign in first")
    return session


class MyBots(TypedDict):
    """A student's bot versions, their recent games, and every version's names."""

    versions: list[VersionName]
    recent: list[GameLine]
    names: dict[int, VersionName]


def my_bots(web: Web, session: Session) -> MyBots:
    repo = web.need_repo()
    # Read now, not from the tables' snapshot: a version uploaded a moment ago is listed.
    names = version_names(repo)
    owned = set(bot_ids_owned_by(repo, session.player_id))
    versions = sorted(
        (v for v in names.values() if v.bot_id in owned), key=lambda v: (v.bot, -v.id)
    )
    recent = recent_games(repo, [v.id for v in versions], limit=30) if versions else []
    return {"versions": versions, "recent": recent, "names": names}
