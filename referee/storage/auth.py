"""The stored, hashed token table as a server :class:`~referee.server.auth.Authenticator`.

Kept out of ``referee.storage.__init__`` so that the storage package never imports gRPC:
the server imports this module when it runs against a database.

A token check costs one scrypt hash (tens of milliseconds of CPU, 16 MiB). A class starting
its bots at once, or reconnecting after a network hiccup, would queue thousands of them, in
the event loop's default executor, ahead of the game records that share it. So: the checks run
in their own small pool (one thread per core), a token whose secret was verified is
remembered (by its SHA-256, in memory only) so that each token is hashed once per server run,
and simultaneous checks of one token share one hash. A remembered token is still looked up on
every handshake (no hash), so revoking it takes effect at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from concurrent.futures import ThreadPoolExecutor

from client_sdk.proto import referee_pb2 as pb
from referee.server.auth import AuthError
from referee.server.session import Identity
from referee.storage.players import PlayerInfo, TokenRejected
from referee.storage.repository import Repository
from referee.storage.tokens import TokenFormatError, split_token


class StoredTokenAuth:
    """Accept the tokens issued by :meth:`Repository.issue_token` (and not revoked).

    The identity's ``player_id`` is the owning player's (or team's) name; the bot's name is
    what its hello says.
    """

    def __init__(self, repo: Repository, threads: int | None = None) -> None:
        self._repo = repo
        self._pool = ThreadPoolExecutor(
            max_workers=threads or os.cpu_count() or 2, thread_name_prefix="token-check"
        )
        #: SHA-256 of a token whose secret was verified -> its key id.
        self._verified: dict[bytes, str] = {}
        #: Checks under way, by SHA-256 of the token: a second bot with the same token waits
        #: for the first one's hash instead of starting its own.
        self._pending: dict[bytes, asyncio.Future[PlayerInfo | None]] = {}
        #: Secrets hashed so far (the expensive part), for tests and metrics.
        self.hashes = 0

    async def authenticate(self, hello: pb.Hello) -> Identity:
        if not hello.token:
            raise AuthError("a token is required")
        player = await self._owner(hello.token)
        if player is None:
            raise AuthError("unknown or revoked token")
        name = " ".join(hello.bot_name.split())[:64] or "anonymous"
        return Identity(name=name, player_id=player.name)

    async def _owner(self, token: str) -> PlayerInfo | None:
        digest = hashlib.sha256(token.encode()).digest()
        key_id = self._verified.get(digest)
        if key_id is not None:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._pool, self._known_owner, key_id)
        check = self._pending.get(digest)
        if check is None:
            # A task of its own: a handshake that gives up waiting does not cancel the hash,
            # whose result is then remembered for the bot's next try.
            check = asyncio.ensure_future(self._check(token, digest))
            self._pending[digest] = check
        return await asyncio.shield(check)

    async def _check(self, token: str, digest: bytes) -> PlayerInfo | None:
        try:
            self.hashes += 1
            loop = asyncio.get_running_loop()
            player = await loop.run_in_executor(self._pool, self._repo.authenticate, token)
            if player is not None:
                self._verified[digest] = _key_id(token)
            return player
        finally:
            self._pending.pop(digest, None)

    def _known_owner(self, key_id: str) -> PlayerInfo | None:
        try:
            return self._repo.token_owner_by_id(key_id).player
        except TokenRejected:
            return None

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _key_id(token: str) -> str:
    try:
        return split_token(token)[0]
    except TokenFormatError:  # pragma: no cover - authenticate() accepted it, so it parses
        return ""
