"""Games as the Arena service's event streams: a live game followed from the hub, a stored
game replayed as the same events (start, every move with its position, end)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from client_sdk.proto import arena_pb2 as apb
from engine.registry import load_game
from referee.live.hub import LiveEnd, LiveGame
from referee.storage import GameDetail


async def live_events(live: LiveGame) -> AsyncIterator[apb.GameEvent]:
    """A live game as ``WatchGame`` sends it: its start, every move as it is played, its end."""
    yield apb.GameEvent(start=live_game(live))
    async for event in live.follow():
        if isinstance(event, LiveEnd):
            yield apb.GameEvent(end=game_ended(event, live.initial_position))
        else:
            yield apb.GameEvent(
                move=apb.PlayedMove(
                    ply=event.ply,
                    seat=event.seat,
                    action=event.action,
                    time_s=event.time_s,
                    position=event.position,
                )
            )


def live_game(g: LiveGame) -> apb.LiveGame:
    return apb.LiveGame(
        uid=g.uid,
        game=g.game,
        players=list(g.players),
        seat_names=list(g.seat_names),
        plies=len(g.moves),
        tournament_id=g.tournament_id or 0,
        mode=g.mode,
    )


def game_ended(end: LiveEnd, initial: str) -> apb.GameEnded:
    msg = apb.GameEnded(
        result=end.result,
        verdict=str(end.verdict),
        termination=str(end.termination or ""),
        reason=end.reason,
        has_winner=end.winner_seat is not None,
        initial_position=initial,
    )
    if end.winner_seat is not None:
        msg.winner_seat = end.winner_seat
    return msg


async def stored_events(
    detail: GameDetail, summary: apb.GameSummary
) -> AsyncIterator[apb.GameEvent]:
    """A finished game as the same events a live one gives (positions replayed)."""
    s = detail.summary
    game = load_game(s.game, **dict(s.game_params))
    state = game.new_state()
    initial = state.to_string()
    yield apb.GameEvent(
        start=apb.LiveGame(
            uid=s.uid,
            game=s.game,
            players=[seat.bot for seat in summary.seats],
            seat_names=list(game.seat_names),
            plies=s.plies,
            tournament_id=s.tournament_id or 0,
        )
    )
    for m in detail.moves:
        state.apply(game.move_from_text(str(m["move"])))
        yield apb.GameEvent(
            move=apb.PlayedMove(
                ply=int(m.get("ply", 0)),
                seat=int(m.get("seat", 0)),
                action=str(m["move"]),
                time_s=float(m.get("measured_s", 0.0)),
                position=state.to_string(),
            )
        )
    end = LiveEnd(s.result, s.verdict, s.termination, s.reason, s.winner_seat)
    yield apb.GameEvent(end=game_ended(end, initial))
