"""The course's ``referee.game`` surface, so bots written for the course skeleton run unchanged.

Only what course bots import lives here (see ``docs/sdk.md``); the rules themselves are the
engine's. Importing this package stays light: no gRPC, no server.
"""

from referee.game.actions import Action, PlaceAction
from referee.game.board import Board, BoardMutation, CellMutation, CellState
from referee.game.constants import BOARD_N, MAX_TURNS
from referee.game.coord import Coord, Direction, Vector2
from referee.game.exceptions import IllegalActionException, PlayerException
from referee.game.pieces import Piece, PieceType, create_piece
from referee.game.player import PlayerColor

__all__ = [
    "BOARD_N",
    "MAX_TURNS",
    "Action",
    "Board",
    "BoardMutation",
    "CellMutation",
    "CellState",
    "Coord",
    "Direction",
    "IllegalActionException",
    "Piece",
    "PieceType",
    "PlaceAction",
    "PlayerColor",
    "PlayerException",
    "Vector2",
    "create_piece",
]
