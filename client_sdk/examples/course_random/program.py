"""Random play, course style: keep a Board up to date from ``update`` and pick any legal
placement, found by sliding every piece template over the cells next to our tokens (a player's
first action, which may go anywhere free, is drawn directly)."""

from __future__ import annotations

import random
from typing import Any

from referee.game import BOARD_N, Board, Coord, PlaceAction, PlayerColor
from referee.game.pieces import _TEMPLATES, PieceType, create_piece


class Agent:
    """The course's interface: ``__init__(color, **referee)``, ``action``, ``update``."""

    def __init__(self, color: PlayerColor, **referee: Any) -> None:
        self._color = color
        self._board = Board()
        self._rng = random.Random()

    def action(self, **referee: Any) -> PlaceAction:
        if self._board.turn_count < 2:
            return first_action(self._board, self._rng)
        return self._rng.choice(legal_actions(self._board, self._color))

    def update(self, color: PlayerColor, action: PlaceAction, **referee: Any) -> None:
        self._board.apply_action(action)


def legal_actions(board: Board, color: PlayerColor) -> list[PlaceAction]:
    """Every legal placement for ``color`` on ``board`` (each cell set once)."""
    own = [cell for cell, state in board._state.items() if state.player == color]
    if not own:
        return first_actions(board)
    anchors = {
        cell + step
        for cell in own
        for step in (Coord(1, 0), Coord(0, 1), Coord(10, 0), Coord(0, 10))
        if board[cell + step].player is None
    }
    seen: set[frozenset[Coord]] = set()
    actions = []
    for anchor in anchors:
        for piece_type in PieceType:
            for offset in _TEMPLATES[piece_type]:
                cells = create_piece(piece_type, anchor - offset).coords
                key = frozenset(cells)
                if key in seen:
                    continue
                seen.add(key)
                if all(board[cell].player is None for cell in cells):
                    actions.append(PlaceAction(*cells))
    return actions


def first_actions(board: Board) -> list[PlaceAction]:
    """A player's first action may go anywhere that is free: every piece at every origin (each
    placement is one piece at one origin, so none is found twice)."""
    actions = []
    for r in range(BOARD_N):
        for c in range(BOARD_N):
            origin = Coord(r, c)
            for piece_type in PieceType:
                cells = create_piece(piece_type, origin).coords
                if all(board[cell].player is None for cell in cells):
                    actions.append(PlaceAction(*cells))
    return actions


def first_action(board: Board, rng: random.Random) -> PlaceAction:
    """A player's first action, uniformly among the free placements: a piece at an origin drawn
    at random (each placement is one piece at one origin), drawn again until it is free. At most
    one action is on the board yet, so a draw rarely fails."""
    pieces = tuple(PieceType)
    while True:
        origin = Coord(rng.randrange(BOARD_N), rng.randrange(BOARD_N))
        cells = create_piece(rng.choice(pieces), origin).coords
        if all(board[cell].player is None for cell in cells):
            return PlaceAction(*cells)
