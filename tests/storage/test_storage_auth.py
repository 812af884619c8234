"""The stored token table plugged into the server's authenticator interface."""

from __future__ import annotations

import asyncio

import pytest

from client_sdk.proto import referee_pb2 as pb
from referee.server.auth import AuthError
from referee.server.storedauth import StoredTokenAuth
from referee.storage import Repository


def test_server_authenticator_accepts_issued_tokens_only(repo: Repository) -> None:
    """A bot's hello with an issued token gets its owner's identity; a wrong, missing or
    revoked token is refused with a message for the bot."""
    repo.create_player("team-3")
    token = repo.issue_token("team-3")
    auth = StoredTokenAuth(repo)

    identity = asyncio.run(auth.authenticate(pb.Hello(bot_name="  greedy   v2 ", token=token)))
    assert (identity.name, identity.player_id) == ("greedy v2", "team-3")

    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    for bad in ("", flipped, "arena_0000000000000000_" + "x" * 43):
        with pytest.raises(AuthError):
            asyncio.run(auth.authenticate(pb.Hello(bot_name="greedy", token=bad)))

    [info] = repo.list_tokens("team-3")
    repo.revoke_token(info.key_id)
    with pytest.raises(AuthError, match="revoked"):
        asyncio.run(auth.authenticate(pb.Hello(bot_name="greedy", token=token)))


def test_verified_token_is_remembered_and_revocation_still_holds(repo: Repository) -> None:
    """A token verified once is remembered (a later bot costs no verification, and carries
    its role and token id); a wrong secret for the same id is verified and refused; revoking
    the token refuses the next bot at once although its secret was remembered."""
    repo.create_player("team-4")
    token = repo.issue_token("team-4")
    auth = StoredTokenAuth(repo)

    async def burst() -> list[str | None]:
        hellos = [pb.Hello(bot_name=f"bot{i}", token=token) for i in range(8)]
        found = await asyncio.gather(*(auth.authenticate(h, "ipv4:10.0.0.1:5") for h in hellos))
        return [identity.player_id for identity in found]

    assert asyncio.run(burst()) == ["team-4"] * 8
    first = auth.hashes
    identity = asyncio.run(auth.authenticate(pb.Hello(bot_name="later", token=token)))
    assert auth.hashes == first
    assert (identity.role, identity.token_id) == ("student", token.split("_")[1])

    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    with pytest.raises(AuthError, match="unknown token"):
        asyncio.run(auth.authenticate(pb.Hello(bot_name="thief", token=flipped)))

    [info] = repo.list_tokens("team-4")
    repo.revoke_token(info.key_id)
    with pytest.raises(AuthError, match="revoked"):
        asyncio.run(auth.authenticate(pb.Hello(bot_name="late", token=token)))
    auth.close()
