"""The stored token table plugged into the server's authenticator interface."""

from __future__ import annotations

import asyncio

import pytest

from client_sdk.proto import referee_pb2 as pb
from referee.auth import AuthError
from referee.storage import Repository
from referee.storage.auth import StoredTokenAuth


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
