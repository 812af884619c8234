"""Tetress: two players place tetrominoes on an 11x11 torus; full rows and columns vanish.

Public surface::

    from engine.tetress import Tetress, Placement
    game = Tetress()
    state = game.new_state()
    state.apply(Placement.parse("PLACE(6-3, 7-2, 7-3, 7-4)"))

See ``docs/tetress.md`` for the rules as implemented and the bitboard design.
"""

from engine.registry import register_game
from engine.tetress.game import TURN_LIMIT, Tetress
from engine.tetress.placement import Placement
from engine.tetress.play import play_random_game, random_move, random_move_id
from engine.tetress.shapes import (
    NUM_PLACEMENTS,
    PLACEMENTS,
    SHAPE_BY_NAME,
    SHAPES,
    Shape,
    placement_id,
    placement_of,
    shape_of,
)
from engine.tetress.state import TetressLegalMoves, TetressState

register_game("tetress", Tetress)

__all__ = [
    "NUM_PLACEMENTS",
    "PLACEMENTS",
    "SHAPES",
    "SHAPE_BY_NAME",
    "TURN_LIMIT",
    "Placement",
    "Shape",
    "Tetress",
    "TetressLegalMoves",
    "TetressState",
    "placement_id",
    "placement_of",
    "play_random_game",
    "random_move",
    "random_move_id",
    "shape_of",
]
