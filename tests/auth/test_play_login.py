"""Logging in to the Play stream with stored tokens: roles, expiry, revocation, old scrypt
tokens, one live session per token and bot name (real server, real gRPC streams)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from authserver import PlayStream, hello, login, running_site
from sqlalchemy import select, update

from client_sdk.proto import referee_pb2 as pb
from engine.registry import load_game
from referee.hosting.matchmaker import Matchmaker
from referee.storage import tokens as tk
from referee.storage.models import Token

pytestmark = pytest.mark.asyncio


async def test_login_checks_expiry_revocation_and_roles(tmp_path: Path) -> None:
    """Every role may play; an expired or revoked token is refused with a fatal
    UNAUTHENTICATED saying which, a wrong secret as an unknown token."""
    async with running_site(tmp_path) as site:
        target = f"127.0.0.1:{site.port}"
        for who in ("student", "instructor", "admin"):
            reply = await login(target, site.tokens[who], bot=f"bot-{who}")
            assert reply.WhichOneof("kind") == "welcome", (who, reply)
        for who in ("expired", "revoked"):
            reply = await login(target, site.tokens[who])
            assert reply.error.code == pb.ERROR_CODE_UNAUTHENTICATED and reply.error.fatal
            assert who in reply.error.message
        wrong = site.tokens["student"][:-3] + "zzz"
        reply = await login(target, wrong)
        assert reply.error.code == pb.ERROR_CODE_UNAUTHENTICATED
        assert "unknown token" in reply.error.message


async def test_old_scrypt_token_logs_in_and_is_rehashed(tmp_path: Path) -> None:
    """A token stored the old way (scrypt) still opens a session, and that login replaces
    its stored hash with the HMAC."""
    async with running_site(tmp_path) as site:
        token = site.tokens["student2"]
        key_id, secret = tk.split_token(token)
        old = tk.legacy_hash(key_id, secret)
        with site.repo.db.write() as s:
            s.execute(
                update(Token)
                .where(Token.key_id == key_id)
                .values(algorithm=old.algorithm, salt=old.salt, digest=old.digest)
            )
        reply = await login(f"127.0.0.1:{site.port}", token)
        assert reply.WhichOneof("kind") == "welcome"
        with site.repo.db.read() as s:
            stored = s.scalars(select(Token.algorithm).where(Token.key_id == key_id)).one()
        assert stored == tk.hmac_algorithm(site.repo.db.token_key)


async def test_second_copy_is_refused_and_the_same_client_replaces(tmp_path: Path) -> None:
    """A second session with the same token and bot name is refused (DUPLICATE_SESSION, with
    the reason); one presenting the first's session id replaces it (the first is told why);
    another bot name of the same token is its own session."""
    async with running_site(tmp_path) as site:
        target = f"127.0.0.1:{site.port}"
        token = site.tokens["student"]
        first = PlayStream(target)
        second = PlayStream(target)
        third = PlayStream(target)
        other = PlayStream(target)
        try:
            welcome = (await first.first(hello(token, "greedy"))).welcome
            assert welcome.session_id
            refused = await second.first(hello(token, "greedy"))
            assert refused.error.code == pb.ERROR_CODE_DUPLICATE_SESSION
            assert "already connected with this token" in refused.error.message
            assert (await other.first(hello(token, "random"))).WhichOneof("kind") == "welcome"
            again = await third.first(hello(token, "greedy", resume=welcome.session_id))
            assert again.WhichOneof("kind") == "welcome"
            goodbye = await first.read()
            assert "replaced by a new connection" in goodbye.goodbye.reason
            names = sorted(s.name for s in site.server.lobby.sessions() if not s.closed.is_set())
            assert names == ["greedy", "random"]
        finally:
            for stream in (first, second, third, other):
                await stream.close()


async def test_duplicates_when_allowed_never_play_each_other(tmp_path: Path) -> None:
    """With duplicates allowed, two sessions of one player are both admitted, and casual
    pairing never matches them with each other; another player's bot is paired."""
    async with running_site(tmp_path, allow_duplicate_sessions=True) as site:
        target = f"127.0.0.1:{site.port}"
        streams = [PlayStream(target) for _ in range(3)]
        try:
            for stream in streams[:2]:
                reply = await stream.first(hello(site.tokens["student"], "greedy"))
                assert reply.WhichOneof("kind") == "welcome"
            tetress = [load_game("tetress")]
            assert Matchmaker(site.server.lobby, tetress)._find_pair() is None
            reply = await streams[2].first(hello(site.tokens["student2"], "greedy"))
            assert reply.WhichOneof("kind") == "welcome"
            await asyncio.sleep(0)
            pair = Matchmaker(site.server.lobby, tetress)._find_pair()
            assert pair is not None
            owners = {pair[0].identity.player_id, pair[1].identity.player_id}
            assert owners == {"ann", "ben"}
        finally:
            for stream in streams:
                await stream.close()
