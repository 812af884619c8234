"""Pure rules engines for tetromino board games (no I/O, no networking).

The public surface, in one place::

    from engine import load_game
    game = load_game("tetress")
    state = game.new_state()
    move = next(iter(state.legal_moves))
    state.apply(move)

See :mod:`engine.game` for the Game/State contract and :mod:`engine.errors` for the
exception tree.
"""

from engine.errors import (
    AmbiguousMoveError,
    BookError,
    EngineError,
    IllegalMoveError,
    NotationError,
    PositionError,
    RecordError,
    RecordIssue,
    UnknownGameError,
)
from engine.game import Game, LegalMoves, State
from engine.outcome import Outcome, Termination
from engine.registry import game_names, load_game, register_game

__all__ = [
    "AmbiguousMoveError",
    "BookError",
    "EngineError",
    "Game",
    "IllegalMoveError",
    "LegalMoves",
    "NotationError",
    "Outcome",
    "PositionError",
    "RecordError",
    "RecordIssue",
    "State",
    "Termination",
    "UnknownGameError",
    "game_names",
    "load_game",
    "register_game",
]
