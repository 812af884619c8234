"""The stored, hashed token table as a server :class:`~referee.auth.Authenticator`.

Kept out of ``referee.storage.__init__`` so that the storage package never imports gRPC:
the server imports this module when it runs against a database.
"""

from __future__ import annotations

import asyncio

from client_sdk.proto import referee_pb2 as pb
from referee.auth import AuthError
from referee.session import Identity
from referee.storage.repository import Repository


class StoredTokenAuth:
    """Accept the tokens issued by :meth:`Repository.issue_token` (and not revoked).

    The identity's ``player_id`` is the owning player's (or team's) name; the bot's name is
    what its hello says. Hashing takes milliseconds, so it runs off the event loop.
    """

    def __init__(self, repo: Repository) -> None:
        self._repo = repo

    async def authenticate(self, hello: pb.Hello) -> Identity:
        if not hello.token:
            raise AuthError("a token is required")
        player = await asyncio.to_thread(self._repo.authenticate, hello.token)
        if player is None:
            raise AuthError("unknown or revoked token")
        name = " ".join(hello.bot_name.split())[:64] or "anonymous"
        return Identity(name=name, player_id=player.name)
