"""The stored token table as a server :class:`~referee.server.auth.Authenticator`.

Kept out of ``referee.storage.__init__`` so that the storage package never imports gRPC:
the server imports this module when it runs against a database.

The checks themselves (keyed hash, verified-token memory, throttling of failed attempts per
address and token id) are the server's :class:`~referee.server.access.Gate`, shared with the
Arena and Submissions services so that one client's failures count at every door.
"""

from __future__ import annotations

from client_sdk.proto import referee_pb2 as pb
from referee.errors import Refused
from referee.server.access import Gate
from referee.server.auth import AuthError
from referee.server.session import Identity
from referee.storage.repository import Repository


class StoredTokenAuth:
    """Accept the tokens issued by :meth:`Repository.issue_token` (not revoked, not
    expired; every role may play).

    The identity's ``player_id`` is the owning player's (or team's) name, its ``role`` and
    ``token_id`` the token's; the bot's name is what its hello says.
    """

    def __init__(self, repo: Repository, gate: Gate | None = None) -> None:
        self.gate = gate or Gate(repo)

    async def authenticate(self, hello: pb.Hello, peer: str = "") -> Identity:
        if not hello.token:
            raise AuthError("a token is required")
        try:
            owner = await self.gate.check(hello.token, peer)
        except Refused as refusal:
            raise AuthError(refusal.message, refusal.retry_after_s) from None
        name = " ".join(hello.bot_name.split())[:64] or "anonymous"
        return Identity(
            name=name,
            player_id=owner.player.name,
            role=str(owner.role),
            token_id=owner.key_id,
        )

    @property
    def hashes(self) -> int:
        """Secrets verified so far (a remembered token costs none)."""
        return self.gate.verified

    def close(self) -> None:
        self.gate.close()
