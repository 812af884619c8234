"""Who is calling: stored tokens resolved to a player and a role, failed attempts throttled.

One :class:`Gate` per server serves every door: the ``Play`` handshake (through
:class:`referee.server.storedauth.StoredTokenAuth`), and the unary and streaming calls of the Arena
and Submissions services, which carry the token in their call metadata as
``authorization: Bearer <token>``. For such a call, :meth:`Gate.caller` returns the
:class:`Caller` (``None`` for a call without a token, i.e. the public) or ends the call:

* ``UNAUTHENTICATED``: a token that opens nothing (malformed, unknown, revoked, expired), or no
  token where one is needed;
* ``PERMISSION_DENIED``: a valid token whose role is below what the call needs;
* ``RESOURCE_EXHAUSTED``: too many failed attempts from this address or with this token id
  (:mod:`referee.server.throttle`); the message says when to retry, and so does the trailing
  metadata ``retry-after`` (whole seconds).

Cost: a token check is one indexed look-up and one HMAC, in a small pool of its own (a flood
of checks cannot fill the executor game records use). A token verified once is remembered by
its SHA-256 (in memory, bounded), so later checks skip the secret but still read the row:
revocation and expiry take effect at the next call.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import NoReturn, TypeVar

import grpc

from referee.errors import Refused
from referee.server.throttle import LoginThrottle, peer_address
from referee.storage.enums import Role
from referee.storage.players import PlayerInfo, TokenOwner, TokenRejected
from referee.storage.repository import Repository
from referee.storage.tokens import public_key_id

#: The request and response types of whichever call a helper serves.
_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")

#: What each Arena call needs: ``None`` is public (no token), else the least role. Every RPC
#: of the service is listed (a test checks), and docs/protocol.md shows this table.
ARENA_ACCESS: dict[str, Role | None] = {
    "ListTournaments": None,
    "GetTournament": None,
    "GetTournamentPresence": None,
    "GetLeaderboard": None,
    "GetLadder": None,
    "ListGames": None,
    "GetGame": None,
    "ListLiveGames": None,
    "WatchGame": None,
    "WhoAmI": Role.STUDENT,
    "ListPlayers": Role.INSTRUCTOR,
    "ListTokens": Role.ADMIN,
}

#: Verified tokens remembered at most (oldest forgotten first; forgetting costs one HMAC).
MAX_REMEMBERED = 20_000
#: Longest token text looked at (a real one is about 70 characters).
MAX_TOKEN_CHARS = 512


@dataclass(frozen=True, slots=True)
class Caller:
    """A caller with a valid token: its player's (or team's) name, role and token id, and
    the player's stored facts."""

    player: str
    role: Role
    token_id: str
    info: PlayerInfo

    def allows(self, needed: Role) -> bool:
        return self.role.allows(needed)


def bearer_token(context: grpc.aio.ServicerContext[_Req, _Resp]) -> str:
    """The token of ``authorization: Bearer <token>`` in a call's metadata (``""``: none)."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            scheme, _, token = value.partition(" ")
            if scheme.lower() == "bearer":
                return token.strip()
    return ""


class Gate:
    """Resolves tokens against ``repo`` for every door of one server (see the module)."""

    def __init__(
        self,
        repo: Repository,
        *,
        throttle: LoginThrottle | None = None,
        threads: int | None = None,
    ) -> None:
        self.repo = repo
        self.throttle = throttle or LoginThrottle()
        self._pool = ThreadPoolExecutor(
            max_workers=threads or min(4, os.cpu_count() or 2), thread_name_prefix="token-check"
        )
        #: SHA-256 of a token whose secret was verified -> its token id.
        self._verified: OrderedDict[bytes, str] = OrderedDict()
        #: Secrets verified so far, and tokens examined and refused (for tests and metrics); a
        #: remembered token and a throttled attempt count in neither.
        self.verified = 0
        self.rejected = 0

    async def check(self, token: str, peer: str) -> TokenOwner:
        """The owner of ``token`` presented from ``peer`` (a gRPC peer string), or
        :class:`~referee.errors.Refused` (throttled, with its ``retry_after_s``, or the reason
        the token opens nothing)."""
        token = token.strip()[:MAX_TOKEN_CHARS]
        digest = hashlib.sha256(token.encode()).digest()
        loop = asyncio.get_running_loop()
        known = self._verified.get(digest)
        if known is not None:
            try:
                return await loop.run_in_executor(self._pool, self.repo.token_owner_by_id, known)
            except TokenRejected as exc:
                self._verified.pop(digest, None)
                raise Refused(str(exc)) from None
        address, token_id = peer_address(peer), public_key_id(token)
        throttled = self.throttle.check(address, token_id)
        if throttled is not None:
            raise Refused(throttled.message, throttled.retry_after_s)
        try:
            owner = await loop.run_in_executor(self._pool, self.repo.check_token, token)
        except TokenRejected as exc:
            self.rejected += 1  # its drops stay in the buckets
            raise Refused(str(exc)) from None
        except BaseException:
            self.throttle.release(address, token_id)  # not the token's fault
            raise
        self.throttle.release(address, token_id)
        self.verified += 1
        self._verified[digest] = owner.key_id
        if len(self._verified) > MAX_REMEMBERED:
            self._verified.popitem(last=False)
        return owner

    async def caller(
        self, context: grpc.aio.ServicerContext[_Req, _Resp], needed: Role | None = None
    ) -> Caller | None:
        """The caller of a unary or streaming call from its ``authorization`` metadata.

        ``needed=None``: a public call; no token gives ``None``, a token must still be valid
        (a wrong one is refused rather than quietly served as public). ``needed`` a role: a
        token of that role or above is required. Ends the call with the status the module
        docstring lists."""
        token = bearer_token(context)
        if not token:
            if needed is None:
                return None
            await _abort(
                context,
                grpc.StatusCode.UNAUTHENTICATED,
                f"this call needs {_a(needed)} token (metadata authorization: Bearer TOKEN)",
            )
        try:
            owner = await self.check(token, context.peer())
        except Refused as refusal:
            if refusal.retry_after_s:
                context.set_trailing_metadata((("retry-after", str(refusal.retry_after_s)),))
                await _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, refusal.message)
            await _abort(
                context,
                grpc.StatusCode.UNAUTHENTICATED,
                f"a valid player token is required ({refusal.message})",
            )
        caller = Caller(owner.player.name, owner.role, owner.key_id, owner.player)
        if needed is not None and not caller.allows(needed):
            await _abort(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                f"this call needs {_a(needed)} token; yours is {_a(caller.role)} token",
            )
        return caller

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _a(role: Role) -> str:
    return f"an {role}" if role[0] in "aeiou" else f"a {role}"


async def _abort(
    context: grpc.aio.ServicerContext[_Req, _Resp], code: grpc.StatusCode, message: str
) -> NoReturn:
    await context.abort(code, message)
    raise AssertionError("context.abort() returned")  # it always raises
