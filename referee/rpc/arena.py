"""The Arena gRPC service (``tetromino.referee.v1.Arena``): tables, tournaments, games and a
live move stream for spectators.

Storage calls are synchronous; they run in worker threads so the event loop (which also
referees games) never waits on the database. Live games come from the runner's
:class:`~referee.live.hub.LiveHub`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, overload

import grpc

from client_sdk.proto import arena_pb2 as apb
from client_sdk.proto import arena_pb2_grpc
from engine.registry import game_names, load_game
from referee.hosting.presence import PresenceDesk
from referee.live.hub import LiveHub
from referee.rpc.arena_accounts import AccountViews
from referee.rpc.callers import Caller, Callers, may_read_game, private_game
from referee.rpc.calls import gated_view, wire_time
from referee.rpc.game_events import live_events, live_game, stored_events
from referee.rpc.presence import presence_reply, running_presence
from referee.server import bounds
from referee.server.access import Gate
from referee.storage import (
    GameDetail,
    GameSummary,
    NotFoundError,
    Repository,
    TournamentInfo,
)
from referee.tournament import schedule
from referee.tournament.ladder import DEFAULT_GAME, DEFAULT_LADDER, compute_ladder
from referee.tournament.standings import standings

SERVICE_NAME = apb.DESCRIPTOR.services_by_name["Arena"].full_name


if TYPE_CHECKING:
    from referee.ratings import Row


class ArenaService(AccountViews, arena_pb2_grpc.ArenaServicer):
    """Read-only views of ``repo``; live games from ``hub`` (optional); the presence of
    tournaments' remote entries from ``presence``, the desk of the server that runs them
    (none: ``unknown``)."""

    name = SERVICE_NAME

    def __init__(
        self,
        repo: Repository,
        hub: LiveHub | None = None,
        *,
        gate: Gate | None = None,
        presence: PresenceDesk | None = None,
    ) -> None:
        self.repo = repo
        self.hub = hub or LiveHub()
        self.gate = gate or Gate(repo)
        self._labels: dict[int, str] = {}
        self.presence = presence if presence is not None else PresenceDesk()
        #: Who a call's token belongs to: a validation game is readable by its uploader and
        #: the staff only.
        self.callers = Callers(repo, self.gate)

    def add_to(self, server: grpc.aio.Server) -> None:
        arena_pb2_grpc.add_ArenaServicer_to_server(self, server)

    # ----------------------------------------------------------------- helpers

    def _tournament(self, text: str) -> TournamentInfo:
        return self.repo.get_tournament(bounds.reference(text, "tournament"))

    def _label(self, version_id: int) -> str:
        if version_id not in self._labels:
            self._labels.update({v.id: v.label for v in self.repo.list_bot_versions()})
        return self._labels.get(version_id, str(version_id))

    def _status(self, t: TournamentInfo) -> apb.TournamentStatus:
        s = t.settings
        state = self.repo.tournament_state(t.id)
        entrants = len(self.repo.tournament_entrants(t.id))
        try:
            planned = schedule.total_games_planned(t, entrants)
        except ValueError:
            planned = 0
        return apb.TournamentStatus(
            id=t.id,
            name=t.name,
            format=str(s.format),
            game=s.game,
            game_params={k: int(v) for k, v in s.game_params.items()},
            status=str(t.status),
            forfeit_policy=str(s.forfeit_policy),
            cycles=s.cycles or 0,
            rounds=s.rounds or 0,
            entrants=entrants,
            games_finished=state.games_finished,
            games_remaining=state.games_remaining,
            games_planned=max(planned, state.games_finished + state.games_remaining),
            pairings_running=len(state.running),
            created_at=wire_time(t.created_at),
            started_at=wire_time(t.started_at),
            finished_at=wire_time(t.finished_at),
            time_per_game_s=float(s.time_control.get("per_game", 0.0)),
            time_per_move_s=float(s.time_control.get("per_move", 0.0)),
            memory_limit_mb=s.memory_limit_mb or 0,
            presence=running_presence(self.presence, t.id),
        )

    def _summary(self, g: GameSummary) -> apb.GameSummary:
        try:
            seat_names = load_game(g.game, **dict(g.game_params)).seat_names
        except Exception:
            seat_names = ("0", "1")
        return apb.GameSummary(
            id=g.id,
            uid=g.uid,
            tournament_id=g.tournament_id or 0,
            game=g.game,
            result=g.result,
            verdict=str(g.verdict),
            termination=str(g.termination or ""),
            reason=g.reason,
            voided=g.voided,
            counted=g.counted,
            plies=g.plies,
            started_at=wire_time(g.started_at),
            finished_at=wire_time(g.finished_at),
            seats=[
                apb.GameSeatSummary(
                    seat=s.seat,
                    seat_name=seat_names[s.seat] if s.seat < len(seat_names) else str(s.seat),
                    bot=self._label(s.bot_version_id),
                    score=s.score,
                    time_used_s=s.time_used_s,
                    peak_memory_bytes=s.peak_memory_bytes or 0,
                )
                for s in g.seats
            ],
        )

    # ----------------------------------------------------------------- RPCs

    @gated_view
    def ListTournaments(self, request: apb.ListTournamentsRequest) -> apb.ListTournamentsResponse:
        return apb.ListTournamentsResponse(
            tournaments=[self._status(t) for t in self.repo.list_tournaments()]
        )

    @gated_view
    def GetTournament(self, request: apb.GetTournamentRequest) -> apb.TournamentStatus:
        return self._status(self._tournament(request.tournament))

    @gated_view
    def GetTournamentPresence(self, request: apb.GetTournamentRequest) -> apb.TournamentPresence:
        return presence_reply(self.repo, self._tournament(request.tournament), self.presence)

    @gated_view
    def GetLeaderboard(self, request: apb.GetLeaderboardRequest) -> apb.Leaderboard:
        anchor = bounds.bounded(request.anchor, "anchor", bounds.MAX_REF_CHARS) or None
        rating = bounds.finite(
            request.anchor_rating or 1500.0, "anchor_rating", bounds.MAX_ANCHOR_RATING
        )
        t = self._tournament(request.tournament) if request.tournament else None
        game = _game_of(request.game, t)
        try:
            st = standings(
                self.repo, t.id if t else None, anchor=anchor, anchor_rating=rating, game=game
            )
        except KeyError:  # the rating fit's word for an anchor not in the table
            missing = bounds.shown(request.anchor)
            raise NotFoundError(f"anchor: no bot {missing} in this table") from None
        board = st.board
        rows = [_elo_row(r, game) for r in board.rows]
        cross = [
            apb.HeadToHeadCell(
                bot=a,
                opponent=b,
                wins=h.wins,
                draws=h.draws,
                losses=h.losses,
                los=board.los.get(a, {}).get(b, 0.0),
            )
            for a, opponents in board.cross.items()
            for b, h in opponents.items()
        ]
        return apb.Leaderboard(
            tournament=t.name if t else "",
            anchor=board.anchor,
            games=board.fit.games,
            connected=board.fit.connected,
            rows=rows,
            cross=cross,
            game=game,
            groups=board.groups,
        )

    @gated_view
    def GetLadder(self, request: apb.GetLadderRequest) -> apb.Ladder:
        game = _game_of(request.game, None)
        standing = compute_ladder(self.repo, game)
        ladder = bounds.bounded(request.ladder, "ladder", bounds.MAX_REF_CHARS)
        return apb.Ladder(
            ladder=ladder or DEFAULT_LADDER,
            game=game,
            games=standing.games,
            rows=[
                apb.LadderRow(
                    rank=r.rank,
                    bot=r.player,
                    mu=r.mu,
                    sigma=r.sigma,
                    ordinal=r.ordinal,
                    games=r.games,
                    provisional=r.provisional,
                    game=game,
                )
                for r in standing.rows
            ],
        )

    @gated_view
    def ListGames(self, request: apb.ListGamesRequest) -> apb.ListGamesResponse:
        limit, offset = bounds.page(request.limit, request.offset)
        t_id = self._tournament(request.tournament).id if request.tournament else None
        version_id = None
        if bounds.bounded(request.bot, "bot", bounds.MAX_REF_CHARS):
            name, sep, version = request.bot.partition("@")
            version_id = self.repo.find_bot_version(name, version if sep else None).id
        games = self.repo.list_games(
            tournament_id=t_id,
            bot_version_id=version_id,
            limit=limit,
            offset=offset,
            game=_game_of(request.game, None, default=None),
        )
        return apb.ListGamesResponse(games=[self._summary(g) for g in games])

    def _detail(self, text: str, field: str = "game", caller: Caller | None = None) -> GameDetail:
        """A stored game; ``PermissionError`` for a validation game ``caller`` may not read."""
        detail = self.repo.get_game(bounds.reference(text, field))
        if not may_read_game(self.repo, caller, detail.summary):
            raise PermissionError(private_game(detail.summary.uid))
        return detail

    async def GetGame(
        self,
        request: apb.GetGameRequest,
        context: grpc.aio.ServicerContext[apb.GetGameRequest, apb.GameRecord],
    ) -> apb.GameRecord:
        caller = await self.callers.of(context)  # GetGame is public: the gate's check

        def build() -> apb.GameRecord:
            detail = self._detail(request.game, caller=caller)
            return apb.GameRecord(
                summary=self._summary(detail.summary),
                record_text=detail.record_text or "",
                record_json=json.dumps(detail.record_json) if detail.record_json else "",
            )

        return await self._call(context, build)

    async def ListLiveGames(
        self,
        request: apb.ListLiveGamesRequest,
        context: grpc.aio.ServicerContext[apb.ListLiveGamesRequest, apb.ListLiveGamesResponse],
    ) -> apb.ListLiveGamesResponse:
        await self._allow(context, "ListLiveGames")
        return apb.ListLiveGamesResponse(games=[live_game(g) for g in self.hub.running()])

    async def WatchGame(
        self,
        request: apb.WatchGameRequest,
        context: grpc.aio.ServicerContext[apb.WatchGameRequest, apb.GameEvent],
    ) -> AsyncIterator[apb.GameEvent]:
        caller = await self.callers.of(context)  # WatchGame is public: the gate's check
        live = self.hub.get(request.uid)
        if live is not None:
            async for event in live_events(live):
                yield event
            return
        detail: GameDetail = await self._call(context, self._detail, request.uid, "uid", caller)
        async for stored in stored_events(detail, self._summary(detail.summary)):
            yield stored


def _elo_row(r: Row, game: str) -> apb.LeaderboardRow:
    """One row of a leaderboard table (a :class:`referee.ratings` row) for the wire."""
    return apb.LeaderboardRow(
        rank=r.rank,
        bot=r.player,
        has_elo=r.elo is not None,
        elo=r.elo or 0.0,
        ci95=r.ci95 or 0.0,
        elo_incremental=r.elo_incremental,
        games=r.games,
        wins=r.wins,
        draws=r.draws,
        losses=r.losses,
        score_pct=r.score_pct or 0.0,
        forfeits=[apb.Forfeit(verdict=v, count=n) for v, n in sorted(r.forfeits.items())],
        game=game,
        group=r.group,
        provisional=r.provisional or "",
    )


@overload
def _game_of(asked: str, t: TournamentInfo | None) -> str: ...


@overload
def _game_of(asked: str, t: TournamentInfo | None, default: None) -> str | None: ...


def _game_of(
    asked: str, t: TournamentInfo | None, default: str | None = DEFAULT_GAME
) -> str | None:
    """The game a table is for: ``asked`` (a registered game; with a tournament, its own),
    else the tournament's, else ``default``; ``ValueError`` (INVALID_ARGUMENT) otherwise."""
    game = asked.strip().lower()
    if not game:
        return t.settings.game if t is not None else default
    if game not in game_names():
        raise ValueError(f"unknown game {bounds.shown(asked)}; games: {', '.join(game_names())}")
    if t is not None and game != t.settings.game:
        raise ValueError(f"tournament {t.name} plays {t.settings.game}, not {game}")
    return game
