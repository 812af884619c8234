"""An accepted move as a game's report keeps it (:class:`~referee.match.report.MoveLog`).

The runner writes a move into its report once the next request is on its way (see
:meth:`referee.match.runner.MatchRunner._play`): until then it holds it as :class:`Unrecorded`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from client_sdk.proto import referee_pb2 as pb
from engine.adjudication import Accepted
from referee.match.report import MoveLog
from referee.match.seat import MAX_COMMENT_CHARS
from referee.match.thinking import take_think
from referee.text.notes import clean_note


@dataclass(slots=True)
class Unrecorded:
    """An accepted move not yet in the report: the decision, the seat's message, and the
    referee's own stall while it was on move."""

    accepted: Accepted
    move: pb.Move
    stall: float


def move_entry(unrecorded: Unrecorded, earlier: Sequence[MoveLog], game_id: str) -> MoveLog:
    """The report's entry for ``unrecorded`` (``earlier``: the moves already in the report,
    which bound its think record)."""
    accepted, move = unrecorded.accepted, unrecorded.move
    return MoveLog(
        ply=accepted.ply,
        seat=accepted.seat,
        action=accepted.text,
        time_s=accepted.elapsed,
        think_time_s=max(0.0, move.think_time_s),
        peak_rss_bytes=move.peak_rss_bytes,
        clock_after_s=accepted.clock_after_s,
        comment=clean_note(move.comment, MAX_COMMENT_CHARS),
        wall_s=accepted.wall,
        cpu_s=accepted.cpu,
        stall_s=max(0.0, unrecorded.stall),
        search=take_think(move, accepted.seat, earlier, game_id),
    )
