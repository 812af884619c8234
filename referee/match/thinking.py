"""A bot's think record for one move, taken in bounds: checked, kept within the game's budget,
never part of a verdict.

A :class:`~client_sdk.proto.referee_pb2.ThinkRecord` out of bounds (see :func:`think_record`)
is dropped with one log line and the move stands; once a seat's records in one game reach
:data:`MAX_THINK_CHARS_PER_GAME` written characters, its later records are dropped too (the
first drop is logged). The bounds live here, beside the one place that applies them;
``referee.server.bounds`` names them with every other field's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from client_sdk.proto import referee_pb2 as pb
from engine.records.search import SearchInfo
from referee.errors import RefereeError
from referee.match.report import MoveLog
from referee.telemetry.logs import get_logger
from referee.text.names import hidden_in
from referee.text.notes import clean_note

log = get_logger("referee.match")

#: ``ThinkRecord.depth``: plies searched.
MAX_THINK_DEPTH = 1000
#: ``ThinkRecord.nodes``: a signed 64-bit integer, as stored.
MAX_THINK_NODES = 2**63 - 1
#: ``ThinkRecord.score``: a finite number of at most this size either way.
MAX_THINK_SCORE = 1e9
#: ``ThinkRecord.pv``: moves, and the characters of each.
MAX_PV_MOVES = 32
MAX_PV_MOVE_CHARS = 64
#: ``ThinkRecord.text``: cut to this many characters, cleaned as a comment.
MAX_THINK_TEXT_CHARS = 200
#: One think record as written in a record (about the largest the bounds above allow).
MAX_THINK_CHARS_PER_MOVE = 3 * 1024
#: A seat's think records in one game, as written; later records are dropped.
MAX_THINK_CHARS_PER_GAME = 64 * 1024


class ThinkOutOfBounds(RefereeError, ValueError):
    """A think record's field out of bounds; the message names the field."""


def think_record(think: pb.ThinkRecord) -> SearchInfo | None:
    """A move's think record in bounds (``None``: it says nothing); :class:`ThinkOutOfBounds`
    names the first field out of bounds. Free text is cleaned and cut, as a comment is."""
    depth = think.depth if think.HasField("depth") else None
    if depth is not None and depth > MAX_THINK_DEPTH:
        raise ThinkOutOfBounds(f"ThinkRecord.depth: {depth}, at most {MAX_THINK_DEPTH}")
    nodes = think.nodes if think.HasField("nodes") else None
    if nodes is not None and nodes > MAX_THINK_NODES:
        raise ThinkOutOfBounds(f"ThinkRecord.nodes: {nodes} is out of range")
    score = think.score if think.HasField("score") else None
    if score is not None and (not math.isfinite(score) or abs(score) > MAX_THINK_SCORE):
        raise ThinkOutOfBounds(f"ThinkRecord.score: {score!r} is out of range")
    if len(think.pv) > MAX_PV_MOVES:
        raise ThinkOutOfBounds(f"ThinkRecord.pv: {len(think.pv)} moves, at most {MAX_PV_MOVES}")
    for move in think.pv:
        if len(move) > MAX_PV_MOVE_CHARS:
            raise ThinkOutOfBounds(
                f"ThinkRecord.pv move: {len(move)} characters, at most {MAX_PV_MOVE_CHARS}"
            )
        hidden = hidden_in(move)
        if hidden is not None:
            raise ThinkOutOfBounds(
                f"ThinkRecord.pv move: {move[:40]!r} has a control or invisible character "
                f"({hidden})"
            )
        if not move.strip():
            raise ThinkOutOfBounds("ThinkRecord.pv move: an empty move")
    text = clean_note(think.text, MAX_THINK_TEXT_CHARS)
    search = SearchInfo(depth, nodes, score, tuple(think.pv), text)
    return None if search.empty else search


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
        search = think_record(move.think)
    except ThinkOutOfBounds as exc:
        log.info("think_record_dropped", game_id=game_id, seat=seat, problem=str(exc))
        return None
    if search is None:
        return None
    used = sum(think_size(m.search) for m in earlier if m.seat == seat and m.search is not None)
    if used + think_size(search) > MAX_THINK_CHARS_PER_GAME:
        if used <= MAX_THINK_CHARS_PER_GAME - MAX_THINK_CHARS_PER_MOVE:
            log.info("think_budget_spent", game_id=game_id, seat=seat, used=used)
        return None
    return search
