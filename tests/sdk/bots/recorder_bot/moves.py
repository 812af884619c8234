from __future__ import annotations

from referee.game import BOARD_N, Board, Coord, IllegalActionException, PlaceAction, PlayerColor
from referee.game.pieces import PieceType, create_piece


def legal_actions(board: Board, color: PlayerColor) -> list[PlaceAction]:
    found: dict[frozenset[Coord], PlaceAction] = {}
    for r in range(BOARD_N):
        for c in range(BOARD_N):
            for piece_type in PieceType:
                cells = create_piece(piece_type, Coord(r, c)).coords
                key = frozenset(cells)
                if key in found or any(board[x].player is not None for x in cells):
                    continue
                action = PlaceAction(*cells)
                try:
                    board.apply_action(action)
                except IllegalActionException:
                    continue
                board.undo_action()
                found[key] = action
    return sorted(found.values(), key=str)
