"""Tetress evaluation: mobility difference, then material as the turn limit nears.

A seat loses when it cannot place, so the number of placements each side has is the main
term; tokens decide a game that reaches the turn limit, so their weight grows with the ply.
Moves are played by placement id (no validation: the search only plays legal moves).
"""

from __future__ import annotations

from typing import Any

from engine.tetress.shapes import PLACEMENTS
from engine.tetress.state import TetressState


class TetressEvaluator:
    """Scores from the side to move's point of view."""

    def moves(self, state: TetressState) -> list[Any]:
        return list(state.legal_moves.ids())

    def play(self, state: TetressState, move: int) -> None:
        state.apply_id(move)

    def engine_move(self, move: int) -> Any:
        return PLACEMENTS[move]

    def evaluate(self, state: TetressState) -> float:
        me = state.to_move
        mobility = state.mobility(me) - state.mobility(1 - me)
        tokens = state.tokens(me) - state.tokens(1 - me)
        weight = 0.1 + 2.0 * state.ply / max(1, state.game.turn_limit)
        return mobility + weight * tokens
