"""What a bot's move message means to the adjudicator: the :data:`~engine.adjudication.Answer`
made of it, with what the move took (bounds checked here, once, for every referee)."""

from __future__ import annotations

from client_sdk.proto import referee_pb2 as pb
from engine.adjudication import Answer, MoveAnswer, NotAMove, ProtocolViolation, Spent
from referee.server import bounds


def move_answer(move: pb.Move, spent: Spent) -> Answer:
    """The answer ``move`` gives, ``spent`` wall (and CPU) seconds after its request."""
    too_long = bounds.action_problem(move.action)
    if too_long is not None:
        return ProtocolViolation(too_long)
    if move.HasField("not_a_move"):
        nam = move.not_a_move
        returned, expected = bounds.clean_note(nam.returned), bounds.clean_note(nam.expected)
        return NotAMove(returned, expected, spent.wall, move.peak_rss_bytes, spent.cpu)
    return MoveAnswer(move.action, spent.wall, move.peak_rss_bytes, spent.cpu)
