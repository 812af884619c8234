"""Annotating a record: the reference search's judgement of every move, written into the
record in its own syntax (the judging itself, with its thresholds, is
:mod:`client_sdk.reference.judge`).

Each judged move gets its annotation glyph and a comment ``eval=<played> best=<best score> |
best: <move>`` kept beside any measurements. Book moves (comment ``book``) are not judged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from client_sdk.reference import WIN
from client_sdk.reference.judge import (
    DEFAULT_NODES,
    MOBILITY_BASE,
    THRESHOLDS,
    Judgement,
    glyph_for,
    judge_moves,
    threshold_scale,
)
from engine.records import GameRecord, RecordedMove

__all__ = [
    "DEFAULT_NODES",
    "MOBILITY_BASE",
    "THRESHOLDS",
    "Judgement",
    "annotate",
    "glyph_for",
    "threshold_scale",
]


def annotate(
    record: GameRecord,
    *,
    nodes: int = DEFAULT_NODES,
    progress: Callable[[Judgement], None] | None = None,
) -> tuple[GameRecord, list[Judgement]]:
    """The record with every judged move annotated, and the judgements."""
    moves: list[RecordedMove] = []
    judgements: list[Judgement] = []
    for judgement, index in judge_moves(record, nodes=nodes, progress=progress):
        recorded = record.moves[index]
        if judgement is None:
            moves.append(recorded)
            continue
        judgements.append(judgement)
        moves.append(_marked(recorded, judgement))
    return dataclasses.replace(record, moves=tuple(moves)), judgements


def _score_text(value: float) -> str:
    if value > WIN / 2:
        return f"+W{int(WIN - value)}"
    if value < -WIN / 2:
        return f"-W{int(WIN + value)}"
    return f"{value:+.1f}"


def _marked(move: RecordedMove, judgement: Judgement) -> RecordedMove:
    extra = [(k, v) for k, v in move.extra if k not in ("eval", "best")]
    extra += [("eval", _score_text(judgement.played)), ("best", _score_text(judgement.best))]
    comment = move.comment
    if judgement.glyph in ("?!", "?", "??") and judgement.best_move != move.san:
        note = f"best: {judgement.best_move}"
        comment = f"{comment}; {note}" if comment else note
    return dataclasses.replace(
        move, annotation=judgement.glyph or move.annotation, extra=tuple(extra), comment=comment
    )
