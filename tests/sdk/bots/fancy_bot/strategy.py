"""Candidate generation for fancy_bot (a sibling module)."""

from __future__ import annotations

from collections.abc import Callable

from referee.game import BOARD_N, Board, Coord, IllegalActionException, PlaceAction, PlayerColor
from referee.game.pieces import _TEMPLATES, PieceType, create_piece


def candidate_actions(
    board: Board, color: PlayerColor, free_neighbours: Callable[[Board, Coord], list[Coord]]
) -> list[PlaceAction]:
    own = [cell for cell, state in board._state.items() if state.player == color]
    if own:
        anchors = {n for cell in own for n in free_neighbours(board, cell)}
    else:
        anchors = {Coord(r, c) for r in range(BOARD_N) for c in range(BOARD_N)}
    found: dict[frozenset[Coord], PlaceAction | None] = {}
    for anchor in sorted(anchors):
        for piece_type in PieceType:
            for offset in _TEMPLATES[piece_type]:
                cells = create_piece(piece_type, anchor - offset).coords
                key = frozenset(cells)
                if key in found:
                    continue
                action = PlaceAction(*cells)
                try:
                    board.apply_action(action)
                except IllegalActionException:
                    found[key] = None
                    continue
                board.undo_action()
                found[key] = action
    return [a for a in found.values() if a is not None]
