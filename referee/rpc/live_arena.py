"""The spectator half of the Arena service, for a server without a database
(``referee serve`` without ``--db``): the live games and their moves, nothing stored."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import NoReturn, TypeVar

import grpc

from client_sdk.proto import arena_pb2 as apb
from client_sdk.proto import arena_pb2_grpc
from referee.live.hub import LiveHub
from referee.rpc.arena import SERVICE_NAME
from referee.rpc.game_events import live_events, live_game
from referee.server import bounds

#: The request and response types of whichever call a helper serves.
_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")


class LiveArenaService(arena_pb2_grpc.ArenaServicer):
    """``ListLiveGames`` and ``WatchGame`` from ``hub``; the stored views answer
    UNIMPLEMENTED (the server keeps no database)."""

    name = SERVICE_NAME

    def __init__(self, hub: LiveHub) -> None:
        self.hub = hub

    def add_to(self, server: grpc.aio.Server) -> None:
        arena_pb2_grpc.add_ArenaServicer_to_server(self, server)

    async def _no_db(self, context: grpc.aio.ServicerContext[_Req, _Resp]) -> NoReturn:
        await context.abort(
            grpc.StatusCode.UNIMPLEMENTED,
            "this server keeps no database (referee serve --db URL): only live games are served",
        )

    # No database, no stored tokens: the calls that need a token are not served either.
    async def WhoAmI(
        self,
        request: apb.WhoAmIRequest,
        context: grpc.aio.ServicerContext[apb.WhoAmIRequest, apb.WhoAmIResponse],
    ) -> apb.WhoAmIResponse:
        return await self._no_db(context)

    async def ListPlayers(
        self,
        request: apb.ListPlayersRequest,
        context: grpc.aio.ServicerContext[apb.ListPlayersRequest, apb.ListPlayersResponse],
    ) -> apb.ListPlayersResponse:
        return await self._no_db(context)

    async def ListTokens(
        self,
        request: apb.ListTokensRequest,
        context: grpc.aio.ServicerContext[apb.ListTokensRequest, apb.ListTokensResponse],
    ) -> apb.ListTokensResponse:
        return await self._no_db(context)

    async def ListTournaments(
        self,
        request: apb.ListTournamentsRequest,
        context: grpc.aio.ServicerContext[apb.ListTournamentsRequest, apb.ListTournamentsResponse],
    ) -> apb.ListTournamentsResponse:
        return await self._no_db(context)

    async def GetTournament(
        self,
        request: apb.GetTournamentRequest,
        context: grpc.aio.ServicerContext[apb.GetTournamentRequest, apb.TournamentStatus],
    ) -> apb.TournamentStatus:
        return await self._no_db(context)

    async def GetTournamentPresence(
        self,
        request: apb.GetTournamentRequest,
        context: grpc.aio.ServicerContext[apb.GetTournamentRequest, apb.TournamentPresence],
    ) -> apb.TournamentPresence:
        return await self._no_db(context)

    async def GetLeaderboard(
        self,
        request: apb.GetLeaderboardRequest,
        context: grpc.aio.ServicerContext[apb.GetLeaderboardRequest, apb.Leaderboard],
    ) -> apb.Leaderboard:
        return await self._no_db(context)

    async def GetLadder(
        self,
        request: apb.GetLadderRequest,
        context: grpc.aio.ServicerContext[apb.GetLadderRequest, apb.Ladder],
    ) -> apb.Ladder:
        return await self._no_db(context)

    async def ListGames(
        self,
        request: apb.ListGamesRequest,
        context: grpc.aio.ServicerContext[apb.ListGamesRequest, apb.ListGamesResponse],
    ) -> apb.ListGamesResponse:
        return await self._no_db(context)

    async def GetGame(
        self,
        request: apb.GetGameRequest,
        context: grpc.aio.ServicerContext[apb.GetGameRequest, apb.GameRecord],
    ) -> apb.GameRecord:
        return await self._no_db(context)

    async def ListLiveGames(
        self,
        request: apb.ListLiveGamesRequest,
        context: grpc.aio.ServicerContext[apb.ListLiveGamesRequest, apb.ListLiveGamesResponse],
    ) -> apb.ListLiveGamesResponse:
        return apb.ListLiveGamesResponse(games=[live_game(g) for g in self.hub.running()])

    async def WatchGame(
        self,
        request: apb.WatchGameRequest,
        context: grpc.aio.ServicerContext[apb.WatchGameRequest, apb.GameEvent],
    ) -> AsyncIterator[apb.GameEvent]:
        try:
            uid = bounds.bounded(request.uid, "uid", bounds.MAX_REF_CHARS)
        except bounds.BadField as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        live = self.hub.get(uid)
        if live is None:
            await context.abort(
                grpc.StatusCode.NOT_FOUND,
                f"no live game {uid!r} (finished games are kept only with --db)",
            )
            return
        async for event in live_events(live):
            yield event
