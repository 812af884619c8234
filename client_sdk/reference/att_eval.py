"""ATT evaluation: how comfortable the placer's well is, negated for the chooser.

The placer wins by surviving or clearing rows and loses when the stack reaches the top, so a
low, flat stack without covered holes is good for it: the classic Tetris features (stack
height, aggregate height, holes, bumpiness) weighed against progress towards its goals.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from engine.att.state import PLACER, AttState


class AttEvaluator:
    """Scores from the side to move's point of view."""

    def moves(self, state: AttState) -> list[Any]:
        return list(state.legal_moves)

    def play(self, state: AttState, move: Any) -> None:
        state.apply(move)

    def engine_move(self, move: Any) -> Any:
        return move

    def evaluate(self, state: AttState) -> float:
        value = placer_comfort(state)
        return value if state.to_move == PLACER else -value


def well_shape(state: AttState) -> tuple[list[int], int]:
    """The height of each column of the well and the number of covered holes."""
    rows = state.rows
    height = len(rows)
    heights = [0] * state.game.width
    holes = 0
    seen = 0
    for index, row in enumerate(rows):
        new = row & ~seen
        covered = seen & ~row
        holes += covered.bit_count()
        column = 0
        while new:
            if new & 1:
                heights[column] = height - index
            new >>= 1
            column += 1
        seen |= row
    return heights, holes


def placer_comfort(state: AttState) -> float:
    """The placer's prospects in this well (higher is better for the placer)."""
    height = len(state.rows)
    width = state.game.width
    heights, holes = well_shape(state)
    top = max(heights)
    bumps = sum(abs(a - b) for a, b in pairwise(heights))
    game = state.game
    progress = 0.0
    if game.max_rows:
        progress += 8.0 * state.rows_cleared / game.max_rows * 10
    if game.max_placer_turns:
        progress += 4.0 * state.placer_turns / game.max_placer_turns * 10
    danger = max(0, top - height // 2) ** 2
    return progress - 1.0 * top - 0.3 * sum(heights) / width - 4.0 * holes - 0.5 * bumps - danger
