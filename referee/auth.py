"""Who may connect: the token check run once per bot session.

A server runs *open* (any token, the bot's own name is used) or with a token table. The
storage layer's hashed token table plugs in later as another :class:`Authenticator`.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Protocol

from client_sdk.proto import referee_pb2 as pb
from referee.session import Identity


class AuthError(Exception):
    """The token is unknown or missing; the message is shown to the bot."""


class Authenticator(Protocol):
    async def authenticate(self, hello: pb.Hello) -> Identity:
        """The identity behind ``hello.token``; raises :class:`AuthError`."""
        ...


def _bot_name(hello: pb.Hello) -> str:
    name = " ".join(hello.bot_name.split())[:64]
    return name or "anonymous"


class OpenAuth:
    """Accept everyone; the bot's name is what it says it is."""

    async def authenticate(self, hello: pb.Hello) -> Identity:
        return Identity(name=_bot_name(hello))


class TokenTable:
    """Accept the tokens of a fixed table: token -> player id (also the name shown)."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        self._tokens = dict(tokens)

    async def authenticate(self, hello: pb.Hello) -> Identity:
        token = hello.token
        for known, player in self._tokens.items():
            # compare_digest so the time taken does not leak how much of a token matched
            if hmac.compare_digest(known.encode(), token.encode()):
                return Identity(name=_bot_name(hello), player_id=player)
        raise AuthError("unknown token" if token else "a token is required")


def read_token_file(path: str) -> dict[str, str]:
    """Tokens from a file: one per line, ``TOKEN`` or ``TOKEN PLAYER``; ``#`` starts a comment."""
    tokens: dict[str, str] = {}
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) > 2:
                raise ValueError(f"{path}:{number}: expected 'TOKEN [PLAYER]'")
            tokens[parts[0]] = parts[1] if len(parts) == 2 else f"player{number}"
    return tokens
