"""Every Arena call checks its role: public calls need no token, private ones the right role;
a bad token is refused even on a public call (real server, real gRPC client)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest
from authserver import running_site

from client_sdk.proto import arena_pb2 as apb
from client_sdk.proto import arena_pb2_grpc
from referee.server.access import ARENA_ACCESS
from referee.storage.enums import Role

#: A request each RPC accepts (an unknown item is fine: NOT_FOUND means the gate let it by).
REQUESTS: dict[str, Any] = {
    "ListTournaments": apb.ListTournamentsRequest(),
    "GetTournament": apb.GetTournamentRequest(tournament="nope"),
    "GetTournamentPresence": apb.GetTournamentRequest(tournament="nope"),
    "GetLeaderboard": apb.GetLeaderboardRequest(),
    "GetLadder": apb.GetLadderRequest(),
    "ListGames": apb.ListGamesRequest(),
    "GetGame": apb.GetGameRequest(game="nope"),
    "ListLiveGames": apb.ListLiveGamesRequest(),
    "WatchGame": apb.WatchGameRequest(uid="nope"),
    "WhoAmI": apb.WhoAmIRequest(),
    "ListPlayers": apb.ListPlayersRequest(),
    "ListTokens": apb.ListTokensRequest(),
}
CALLERS = ["public", "student", "instructor", "admin"]
DENIED = {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED}


async def _call(stub: Any, rpc: str, token: str | None) -> tuple[grpc.StatusCode, Any]:
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    try:
        if rpc == "WatchGame":
            events = [e async for e in stub.WatchGame(REQUESTS[rpc], metadata=metadata)]
            return grpc.StatusCode.OK, events
        return grpc.StatusCode.OK, await getattr(stub, rpc)(REQUESTS[rpc], metadata=metadata)
    except grpc.aio.AioRpcError as exc:
        return exc.code(), exc.details()


def test_the_access_table_covers_every_arena_rpc() -> None:
    """Every RPC of the Arena service has a row in the access table, and no other row exists."""
    methods = {m.name for m in apb.DESCRIPTOR.services_by_name["Arena"].methods}
    assert set(ARENA_ACCESS) == methods == set(REQUESTS)


@pytest.mark.asyncio
async def test_each_rpc_admits_exactly_its_roles(tmp_path: Path) -> None:
    """Table-driven over every Arena RPC and every kind of caller: a public call is served to
    all; a private one is refused without a token (UNAUTHENTICATED) or with a lower role
    (PERMISSION_DENIED), and served to its role and above."""
    async with (
        running_site(tmp_path) as site,
        grpc.aio.insecure_channel(f"127.0.0.1:{site.port}") as channel,
    ):
        stub = arena_pb2_grpc.ArenaStub(channel)
        for rpc, needed in ARENA_ACCESS.items():
            for who in CALLERS:
                token = None if who == "public" else site.tokens[who]
                code, _ = await _call(stub, rpc, token)
                if needed is None or (who != "public" and Role(who).allows(needed)):
                    assert code not in DENIED, (rpc, who, code)
                elif who == "public":
                    assert code == grpc.StatusCode.UNAUTHENTICATED, (rpc, who, code)
                else:
                    assert code == grpc.StatusCode.PERMISSION_DENIED, (rpc, who, code)


@pytest.mark.asyncio
async def test_private_views_show_the_right_things(tmp_path: Path) -> None:
    """WhoAmI names the caller and role; ListTokens lists token ids and states, never a
    secret; an expired or revoked token is refused even on a public call, saying which."""
    async with (
        running_site(tmp_path) as site,
        grpc.aio.insecure_channel(f"127.0.0.1:{site.port}") as channel,
    ):
        stub = arena_pb2_grpc.ArenaStub(channel)
        code, me = await _call(stub, "WhoAmI", site.tokens["instructor"])
        assert code == grpc.StatusCode.OK
        assert (me.player, me.role) == ("prof", "instructor")
        code, listed = await _call(stub, "ListTokens", site.tokens["admin"])
        states = {t.token_id: t.state for t in listed.tokens}
        assert sorted(states.values()).count("active") == 4
        assert "expired" in states.values() and "revoked" in states.values()
        for token in site.tokens.values():
            # arena_<id>_<secret>: the secret may itself hold "_"
            assert token.split("_", 2)[2] not in str(listed)
        for which in ("expired", "revoked"):
            code, details = await _call(stub, "ListGames", site.tokens[which])
            assert code == grpc.StatusCode.UNAUTHENTICATED and which in details
        code, details = await _call(stub, "ListGames", "arena_0123456789abcdef_" + "x" * 43)
        assert code == grpc.StatusCode.UNAUTHENTICATED and "unknown token" in details
        code, details = await _call(stub, "ListPlayers", site.tokens["student"])
        assert "needs an instructor token; yours is a student token" in details
