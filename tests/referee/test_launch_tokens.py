"""The tournament mode authenticator: one-game tokens first, then the fallback table."""

from __future__ import annotations

import asyncio

import pytest

from client_sdk.proto import referee_pb2 as pb
from referee.server.auth import AuthError, LaunchTokens, TokenTable


def _hello(token: str, name: str = "bot") -> pb.Hello:
    return pb.Hello(token=token, bot_name=name)


def test_issued_token_names_its_one_game_player() -> None:
    """An issued token authenticates as its launch identity, with the bot's own name."""
    auth = LaunchTokens()
    token = auth.issue("launch:g1:0")
    identity = asyncio.run(auth.authenticate(_hello(token, "  greedy   bot ")))
    assert identity.player_id == "launch:g1:0"
    assert identity.name == "greedy bot"


def test_revoked_token_is_refused() -> None:
    """After the game a revoked one-game token no longer opens a session."""
    auth = LaunchTokens()
    token = auth.issue("launch:g1:1")
    auth.revoke(token)
    with pytest.raises(AuthError, match="unknown token"):
        asyncio.run(auth.authenticate(_hello(token)))


def test_unknown_token_goes_to_the_fallback() -> None:
    """A token that is not a one-game token is checked by the fallback authenticator."""
    auth = LaunchTokens(TokenTable({"student-secret": "alice"}))
    auth.issue("launch:g2:0")
    identity = asyncio.run(auth.authenticate(_hello("student-secret")))
    assert identity.player_id == "alice"
    with pytest.raises(AuthError):
        asyncio.run(auth.authenticate(_hello("guess")))


def test_issued_tokens_are_distinct() -> None:
    """Every launched bot gets its own unguessable token."""
    auth = LaunchTokens()
    tokens = {auth.issue(f"launch:g:{i}") for i in range(50)}
    assert len(tokens) == 50
    assert all(len(t) == 32 for t in tokens)
