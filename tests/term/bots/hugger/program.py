"""A test student's bot (ann): keep our tokens in one tight clump.

For every legal placement next to our tokens, count how many of the new cells touch our own
tokens; play the placement touching most, ties broken by the smallest cells.
"""

from __future__ import annotations

from typing import Any

from referee.game import BOARD_N, Board, Coord, PlaceAction, PlayerColor
from referee.game.pieces import _TEMPLATES, PieceType, create_piece

DIRECTIONS = (Coord(1, 0), Coord(0, 1), Coord(BOARD_N - 1, 0), Coord(0, BOARD_N - 1))


def neighbours(cell: Coord) -> list[Coord]:
    return [cell + d for d in DIRECTIONS]


def placements(board: Board, me: PlayerColor) -> list[PlaceAction]:
    mine = [c for c, s in board._state.items() if s.player == me]
    if mine:
        starts = {n for c in mine for n in neighbours(c) if board[n].player is None}
    else:
        starts = {Coord(r, c) for r in range(BOARD_N) for c in range(BOARD_N)}
        starts = {c for c in starts if board[c].player is None}
    found: dict[frozenset[Coord], PlaceAction] = {}
    for start in sorted(starts):
        for kind in PieceType:
            for shift in _TEMPLATES[kind]:
                cells = create_piece(kind, start - shift).coords
                if all(board[c].player is None for c in cells):
                    found.setdefault(frozenset(cells), PlaceAction(*cells))
    return list(found.values())


def touching(board: Board, me: PlayerColor, action: PlaceAction) -> int:
    total = 0
    for cell in action.coords:
        for n in neighbours(cell):
            if board[n].player == me:
                total += 1
    return total


class Agent:
    def __init__(self, color: PlayerColor, **referee: Any) -> None:
        self.color = color
        self.board = Board()

    def action(self, **referee: Any) -> PlaceAction:
        options = placements(self.board, self.color)
        best = max(options, key=lambda a: (touching(self.board, self.color, a), sorted(a.coords)))
        return best

    def update(self, color: PlayerColor, action: PlaceAction, **referee: Any) -> None:
        self.board.apply_action(action)
