"""The Arena service's account views: who a token is, the players, the tokens.

Each needs a token of a role (``WhoAmI`` a student's, ``ListPlayers`` an instructor's,
``ListTokens`` an admin's; :data:`referee.server.access.ARENA_ACCESS`). A mixin of
:class:`referee.rpc.arena.ArenaService`, its calls through
:class:`~referee.rpc.calls.ArenaCalls`.
"""

from __future__ import annotations

import grpc

from client_sdk.proto import arena_pb2 as apb
from referee.rpc.calls import ArenaCalls, gated_view, wire_time


class AccountViews(ArenaCalls):
    """``WhoAmI``, ``ListPlayers`` and ``ListTokens``."""

    async def WhoAmI(
        self,
        request: apb.WhoAmIRequest,
        context: grpc.aio.ServicerContext[apb.WhoAmIRequest, apb.WhoAmIResponse],
    ) -> apb.WhoAmIResponse:
        caller = await self._allow(context, "WhoAmI")
        assert caller is not None
        owner = await self._call(context, self.repo.token_owner_by_id, caller.token_id)
        return apb.WhoAmIResponse(
            player=caller.player,
            role=str(caller.role),
            token_id=caller.token_id,
            expires_at=wire_time(owner.expires_at),
        )

    @gated_view
    def ListPlayers(self, request: apb.ListPlayersRequest) -> apb.ListPlayersResponse:
        players = self.repo.list_players()
        return apb.ListPlayersResponse(
            players=[
                apb.PlayerEntry(
                    name=p.name,
                    kind=str(p.kind),
                    display_name=p.display_name or "",
                    created_at=wire_time(p.created_at),
                )
                for p in players
            ]
        )

    @gated_view
    def ListTokens(self, request: apb.ListTokensRequest) -> apb.ListTokensResponse:
        entries = []
        for p in self.repo.list_players():
            entries += [
                apb.TokenEntry(
                    token_id=t.key_id,
                    player=p.name,
                    role=str(t.role),
                    label=t.label or "",
                    state=t.state(),
                    created_at=wire_time(t.created_at),
                    last_used_at=wire_time(t.last_used_at),
                    expires_at=wire_time(t.expires_at),
                )
                for t in self.repo.list_tokens(p.id)
            ]
        return apb.ListTokensResponse(tokens=entries)
