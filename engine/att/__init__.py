"""Asymmetric Tetris Tactics: a chooser names tetrominoes, a placer drops them in a well.

Importing this package registers the game as ``"att"``.
"""

from engine.att.game import DEFAULT_MAX_PLACER_TURNS, DEFAULT_MAX_ROWS, AsymmetricTetrisTactics
from engine.att.moves import COLUMNS, AttMove, Choice, Drop
from engine.att.search import Path
from engine.att.state import AttState
from engine.registry import register_game

register_game("att", AsymmetricTetrisTactics)

__all__ = [
    "COLUMNS",
    "DEFAULT_MAX_PLACER_TURNS",
    "DEFAULT_MAX_ROWS",
    "AsymmetricTetrisTactics",
    "AttMove",
    "AttState",
    "Choice",
    "Drop",
    "Path",
]
