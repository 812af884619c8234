"""Who may connect: the token check run once per bot session.

A server runs *open* (any token, the bot's own name is used) or with a token table. The
storage layer's hashed token table plugs in later as another :class:`Authenticator`.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from typing import Protocol

from client_sdk.proto import referee_pb2 as pb
from referee.errors import Refused
from referee.server.session import Identity


class AuthError(Refused):
    """The token is unknown or missing; the message is shown to the bot. ``retry_after_s``
    set: the attempt was throttled (too many failures), not examined; try again then."""


class Authenticator(Protocol):
    async def authenticate(self, hello: pb.Hello, peer: str = "") -> Identity:
        """The identity behind ``hello.token`` sent from ``peer`` (a gRPC peer string);
        raises :class:`AuthError`."""
        ...


def _bot_name(hello: pb.Hello) -> str:
    name = " ".join(hello.bot_name.split())[:64]
    return name or "anonymous"


class OpenAuth:
    """Accept everyone; the bot's name is what it says it is."""

    async def authenticate(self, hello: pb.Hello, peer: str = "") -> Identity:
        return Identity(name=_bot_name(hello))


class TokenTable:
    """Accept the tokens of a fixed table: token -> player id (also the name shown).

    ``one_session``: the tokens are one-game credentials, each good for one session (the
    server refuses a second one; a resume of that session is still accepted)."""

    def __init__(self, tokens: Mapping[str, str], *, one_session: bool = False) -> None:
        self._tokens = dict(tokens)
        self.one_session = one_session

    async def authenticate(self, hello: pb.Hello, peer: str = "") -> Identity:
        token = hello.token
        for known, player in self._tokens.items():
            # compare_digest so the time taken does not leak how much of a token matched
            if hmac.compare_digest(known.encode(), token.encode()):
                return Identity(
                    name=_bot_name(hello), player_id=player, one_session=self.one_session
                )
        raise AuthError("unknown token" if token else "a token is required")


class LaunchTokens:
    """The server's authenticator in tournament mode: one-game tokens for the bots the
    tournament runner launches first, then ``fallback`` (e.g. the stored player tokens)."""

    def __init__(self, fallback: Authenticator | None = None) -> None:
        #: One-game token -> the identity's ``player_id`` (``launch:GAME:SEAT``).
        self.tokens: dict[str, str] = {}
        self.fallback = fallback

    def issue(self, player: str) -> str:
        """A new one-game token for ``player``; :meth:`revoke` it when the game is over."""
        token = secrets.token_hex(16)
        self.tokens[token] = player
        return token

    def revoke(self, token: str) -> None:
        self.tokens.pop(token, None)

    def holds(self, player: str) -> bool:
        """Whether a one-game token of ``player`` is out (a launched bot's identity)."""
        return player in self.tokens.values()

    async def authenticate(self, hello: pb.Hello, peer: str = "") -> Identity:
        player = self.tokens.get(hello.token)
        if player is not None:
            return Identity(name=_bot_name(hello), player_id=player, one_session=True)
        if self.fallback is None:
            raise AuthError("unknown token")
        return await self.fallback.authenticate(hello, peer)


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
