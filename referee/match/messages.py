"""The protocol messages of one game, built with the generated protobuf classes.

The protocol is lean: the game's fixed facts and the move list go out only in ``GameStart``
(at the start, and again when a seat resumes), and each ``MoveRequest`` carries the position,
the newest move and the clocks, so a request's size does not grow with the game.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from client_sdk.proto import referee_pb2 as pb
from engine.adjudication import Accepted
from engine.adjudication.verdicts import GameEnd, Verdict
from engine.game import Game
from referee.match.clock import SeatClock, TimeControl

VERDICT_TO_PB: dict[Verdict, pb.Verdict.ValueType] = {
    Verdict.NORMAL: pb.VERDICT_NORMAL,
    Verdict.TURN_LIMIT: pb.VERDICT_TURN_LIMIT,
    Verdict.TIME: pb.VERDICT_TIME,
    Verdict.MEMORY: pb.VERDICT_MEMORY,
    Verdict.ILLEGAL_MOVE: pb.VERDICT_ILLEGAL_MOVE,
    Verdict.RUNTIME_ERROR: pb.VERDICT_RUNTIME_ERROR,
    Verdict.PROTOCOL_ERROR: pb.VERDICT_PROTOCOL_ERROR,
    Verdict.DISCONNECT: pb.VERDICT_DISCONNECT,
    Verdict.ABORTED: pb.VERDICT_ABORTED,
}


def clock_messages(seat_names: Sequence[str], clocks: Sequence[SeatClock]) -> list[pb.Clock]:
    """Both clocks, in seat order."""
    out = []
    for name, clock in zip(seat_names, clocks, strict=True):
        message = pb.Clock(seat_name=name, used_s=clock.used)
        if clock.remaining is not None:
            message.remaining_s = clock.remaining
        out.append(message)
    return out


class GameMessages:
    """Builds (and serialises) every message one game sends to its seats."""

    def __init__(
        self,
        game_id: str,
        game: Game[Any],
        *,
        players: Sequence[tuple[str, str]],
        control: TimeControl,
        memory_limit_bytes: int,
        initial_position: str,
        labels: Mapping[str, str],
        seeds: Sequence[int] = (0, 0),
    ) -> None:
        self.game_id = game_id
        self.seat_names = tuple(game.seat_names)
        tc = pb.TimeControl(
            game_time_s=control.game_time_s,
            move_time_s=control.move_time_s,
            increment_s=control.increment_s,
            grace_s=control.grace_s,
            clock=str(control.clock),
        )
        self.info = [
            pb.GameInfo(
                game=pb.GameSpec(name=game.name, params=dict(game.params)),
                seat=seat,
                seat_names=self.seat_names,
                time_control=tc,
                memory_limit_bytes=memory_limit_bytes,
                initial_position=initial_position,
                players=[pb.Player(name=name, version=version) for name, version in players],
                labels=dict(labels),
                seed=seeds[seat],
            )
            for seat in range(2)
        ]
        # The move request is rebuilt in place for every ply: setting fields of one message
        # costs a fraction of building a new one (and its clocks and last move) each time.
        self._request = pb.RefereeMessage()
        request = self._request.move_request
        request.game_id = game_id
        self._clocks = [request.clocks.add(seat_name=name) for name in self.seat_names]

    def game_start(self, seat: int, moves: Sequence[str] = (), position: str = "") -> bytes:
        """``GameStart`` for ``seat``, with the moves played so far (book moves, or every move on a
        resume) and the current position."""
        start = pb.GameStart(game_id=self.game_id, info=self.info[seat], moves=moves)
        if position:
            start.position = position
        return pb.RefereeMessage(game_start=start).SerializeToString()

    def move_request(
        self,
        ply: int,
        position: str,
        clocks: Sequence[SeatClock],
        limit: float | None,
        last_move: Accepted | None,
    ) -> bytes:
        """``MoveRequest`` for the seat to move (``limit``: seconds for it, grace excluded;
        ``last_move``: the newest accepted move, announced with it)."""
        message = self._request
        request = message.move_request
        request.ply = ply
        request.position = position
        for out, clock in zip(self._clocks, clocks, strict=True):
            out.used_s = clock.used
            if clock.remaining is None:
                out.ClearField("remaining_s")
            else:
                out.remaining_s = clock.remaining
        if limit is None:
            request.ClearField("move_time_limit_s")
        else:
            request.move_time_limit_s = max(0.0, limit)
        if last_move is None:
            request.ClearField("last_move")
        else:
            # Inside a request the move's position and clocks are the request's own.
            last = request.last_move
            last.ply = last_move.ply
            last.seat = last_move.seat
            last.action = last_move.text
            last.time_s = last_move.elapsed
        return message.SerializeToString()

    def game_over(
        self,
        end: GameEnd,
        *,
        plies: int,
        final_position: str,
        clocks: Sequence[SeatClock],
        last_action: str,
    ) -> pb.RefereeMessage:
        """``GameOver``: result, verdict, termination and the sentence saying why."""
        over = pb.GameOver(
            game_id=self.game_id,
            result=end.result(),
            winner=end.winner_name(self.seat_names),
            verdict=VERDICT_TO_PB[end.verdict],
            termination=str(end.termination),
            reason=end.reason,
            plies=plies,
            final_position=final_position,
            clocks=clock_messages(self.seat_names, clocks),
            last_action=last_action,
        )
        if end.winner is not None:
            over.winner_seat = end.winner
        if end.offender is not None:
            over.offender_seat = end.offender
        return pb.RefereeMessage(game_over=over)
