"""A bot's think record for one move, taken in bounds: checked, kept within the game's budget,
never part of a verdict.

A :class:`~client_sdk.proto.referee_pb2.ThinkRecord` out of bounds (see
:func:`referee.server.bounds.think_record`) is dropped with one log line and the move stands;
once a seat's records in one game reach :data:`~referee.server.bounds.MAX_THINK_CHARS_PER_GAME`
written characters, its later records are dropped too (the first drop is logged).
"""

from __future__ import annotations

from collections.abc import Sequence

from client_sdk.proto import referee_pb2 as pb
from engine.records.search import SearchInfo
from referee.match.report import MoveLog
from referee.server import bounds
from referee.telemetry.logs import get_logger

log = get_logger("referee.match")


def think_size(search: SearchInfo) -> int:
    """The characters ``search`` takes in a written record."""
    return sum(len(word) + 1 for word in search.tokens())


def take_think(
    move: pb.Move, seat: int, earlier: Sequence[MoveLog], game_id: str = ""
) -> SearchInfo | None:
    """The think record of ``move`` by ``seat`` to keep, or ``None`` (none sent, out of
    bounds, or over the game's budget given the ``earlier`` moves)."""
    if not move.HasField("think"):
        return None
    try:
        search = bounds.think_record(move.think)
    except bounds.BadField as exc:
        log.info("think_record_dropped", game_id=game_id, seat=seat, problem=str(exc))
        return None
    if search is None:
        return None
    used = sum(think_size(m.search) for m in earlier if m.seat == seat and m.search is not None)
    if used + think_size(search) > bounds.MAX_THINK_CHARS_PER_GAME:
        if used <= bounds.MAX_THINK_CHARS_PER_GAME - bounds.MAX_THINK_CHARS_PER_MOVE:
            log.info("think_budget_spent", game_id=game_id, seat=seat, used=used)
        return None
    return search
