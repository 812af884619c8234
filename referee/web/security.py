"""What keeps the web front safe by default: security headers, the request body limit, signed
session cookies and CSRF tokens.

Pages are rendered with autoescaping, so no name or text a bot author chose can become markup;
these pieces cover the rest. They are plain ASGI middleware and functions so that each can be
tested on its own.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from referee.errors import RefereeError

#: The content security policy every page satisfies: scripts and styles only from our own
#: static files (no inline script, no inline style, no eval), nothing framed, forms post home.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), payment=()"),
)

HSTS = (b"strict-transport-security", b"max-age=31536000; includeSubDomains")


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every HTTP response (and HSTS over HTTPS)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        https = scope.get("scheme") == "https"

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                headers = list(message.get("headers", []))
                extra = (*SECURITY_HEADERS, HSTS) if https else SECURITY_HEADERS
                headers.extend((k, v) for k, v in extra if k not in present)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyTooLarge(RefereeError):
    """A request body went over its limit while it was being read."""


class BodyLimit:
    """Refuses request bodies over ``limit`` bytes (``upload_limit`` under ``upload_prefix``).

    A declared ``Content-Length`` over the limit is answered 413 before one byte of the body
    is read; a body without one (chunked) is counted as it arrives and cut off at the limit,
    so an attacker can never make the server buffer more than the limit.
    """

    def __init__(
        self, app: ASGIApp, *, limit: int, upload_limit: int, upload_prefix: str = "/me/upload"
    ) -> None:
        self.app = app
        self.limit = limit
        self.upload_limit = upload_limit
        self.upload_prefix = upload_prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        limit = self.upload_limit if path.startswith(self.upload_prefix) else self.limit
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _too_large(send, limit)
            return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, tracking_send)
        except BodyTooLarge:
            if not started:
                await _too_large(send, limit)


def _content_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", []):
        if key == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _too_large(send: Send, limit: int) -> None:
    body = f"request body too large: at most {limit} bytes\n".encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


# ------------------------------------------------------------------------ signed cookies


@dataclass(frozen=True, slots=True)
class Session:
    """A signed-in student: who, and until when (seconds since the epoch); ``role`` is the
    signing-in token's (``student``, ``instructor`` or ``admin``)."""

    player_id: int
    player: str
    expires: float
    role: str = "student"


class Signer:
    """Signs and checks small JSON payloads with HMAC-SHA256 (session cookies)."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("the web secret must be at least 16 bytes")
        self._key = hashlib.sha256(b"tetromino-web-session\0" + secret).digest()

    def sign(self, payload: Mapping[str, object]) -> str:
        body = base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode())
        mac = hmac.new(self._key, body, hashlib.sha256).digest()
        return (body + b"." + base64.urlsafe_b64encode(mac)).decode().replace("=", "")

    # ``Any``: the decoded JSON of a cookie, checked field by field by :meth:`read_session`.
    def verify(self, text: str) -> dict[str, Any] | None:
        body_text, sep, mac_text = text.partition(".")
        if not sep or len(text) > 4096:
            return None
        try:
            body = _unpad(body_text)
            mac = base64.urlsafe_b64decode(_unpad(mac_text))
        except ValueError:
            return None
        expected = hmac.new(self._key, body, hashlib.sha256).digest()
        if not hmac.compare_digest(mac, expected):
            return None
        try:
            value = json.loads(base64.urlsafe_b64decode(body))
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def session_cookie(self, session: Session) -> str:
        return self.sign(
            {"p": session.player_id, "n": session.player, "e": session.expires, "r": session.role}
        )

    def read_session(self, text: str | None) -> Session | None:
        if not text:
            return None
        value = self.verify(text)
        if value is None:
            return None
        try:
            role = str(value.get("r", "student"))
            session = Session(int(value["p"]), str(value["n"]), float(value["e"]), role)
        except (KeyError, TypeError, ValueError):
            return None
        return session if session.expires > time.time() else None


def _unpad(text: str) -> bytes:
    raw = text.encode()
    return raw + b"=" * (-len(raw) % 4)


def new_csrf_token() -> str:
    return secrets.token_urlsafe(24)


def csrf_ok(cookie: str | None, submitted: str | None) -> bool:
    """The double-submit check: the form's token equals the (SameSite=Strict) cookie's."""
    if not cookie or not submitted or len(cookie) < 16:
        return False
    return hmac.compare_digest(cookie.encode(), submitted.encode())
