"""HTTP validators for stored games' pages and records: an ETag of the body, the game's end
as Last-Modified, and a 304 when the reader's copy is still the one we would send.

A stored game never changes, but what a reader is shown of it may (their own bot's output
when signed in; the thinking records once a tournament is over), so the ETag is computed
from the body sent, never from the game alone, and only a body no visitor-specific part
can change (a record with nothing hidden, read without a session) is cached for long by
shared caches; the rest is ``private`` and revalidated each time (``no-cache``), which is a
304 without the body when nothing changed. The ETag is weak: the gzip middleware compresses
the body after it is computed.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime

from starlette.requests import Request
from starlette.responses import Response

#: Shared caches may keep a record nobody can see more of for this long (a year: it never
#: changes).
IMMUTABLE_S = 365 * 24 * 3600


def cache_control(*, shared: bool) -> str:
    """``shared``: the body is the same for every visitor and never changes."""
    if shared:
        return f"public, max-age={IMMUTABLE_S}, immutable"
    return "private, no-cache"


def etag_of(body: bytes) -> str:
    return 'W/"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def validated(
    request: Request, response: Response, *, modified: datetime | None, shared: bool
) -> Response:
    """``response`` with its validators and cache lifetime, or a bodiless 304 when the
    request's ``If-None-Match`` (else ``If-Modified-Since``) says the reader has it."""
    tag = etag_of(bytes(response.body))
    headers = {"etag": tag, "cache-control": cache_control(shared=shared), "vary": "Cookie"}
    if modified is not None:
        modified = modified if modified.tzinfo else modified.replace(tzinfo=UTC)
        headers["last-modified"] = format_datetime(modified, usegmt=True)
    if _fresh(request, tag, modified):
        return Response(status_code=304, headers=headers)
    for name, value in headers.items():
        response.headers[name] = value
    return response


def _fresh(request: Request, tag: str, modified: datetime | None) -> bool:
    match = request.headers.get("if-none-match")
    if match is not None:
        offered = {t.strip().removeprefix("W/") for t in match.split(",")}
        return "*" in offered or tag.removeprefix("W/") in offered
    since = request.headers.get("if-modified-since")
    if since is None or modified is None:
        return False
    try:
        return modified.replace(microsecond=0) <= parsedate_to_datetime(since)
    except (TypeError, ValueError):
        return False
