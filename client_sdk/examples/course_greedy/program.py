"""Greedy play, course style: try every legal placement on the course ``Board``
(``apply_action`` / ``undo_action``), score the result, keep the best.

The score is material (our tokens minus theirs: line removals count) plus a little for
free cells next to our tokens and minus as much for free cells next to theirs (room to move).
"""

from __future__ import annotations

import random
from typing import Any

from referee.game import BOARD_N, Board, Coord, PlaceAction, PlayerColor
from referee.game.pieces import _TEMPLATES, PieceType, create_piece

_STEPS = (Coord(1, 0), Coord(0, 1), Coord(BOARD_N - 1, 0), Coord(0, BOARD_N - 1))
# Each cell's four neighbours, computed once (Coord arithmetic is the slow part of a scan).
_NEIGHBOURS = {
    Coord(r, c): tuple(Coord(r, c) + step for step in _STEPS)
    for r in range(BOARD_N)
    for c in range(BOARD_N)
}


class Agent:
    """The course's interface: ``__init__(color, **referee)``, ``action``, ``update``."""

    def __init__(self, color: PlayerColor, **referee: Any) -> None:
        self._color = color
        self._board = Board()
        self._rng = random.Random()

    def action(self, **referee: Any) -> PlaceAction:
        board = self._board
        best: list[PlaceAction] = []
        best_score = float("-inf")
        for action in candidate_actions(board, self._color):
            board.apply_action(action)
            if board.game_over:
                winner = board.winner_color
                score = 1e9 if winner == self._color else -1e9 if winner else 0.0
            else:
                score = evaluate(board, self._color)
            board.undo_action()
            if score > best_score:
                best, best_score = [action], score
            elif score == best_score:
                best.append(action)
        return self._rng.choice(best)

    def update(self, color: PlayerColor, action: PlaceAction, **referee: Any) -> None:
        self._board.apply_action(action)


def evaluate(board: Board, color: PlayerColor) -> float:
    """Material plus a tenth of the difference in free cells next to each side's tokens."""
    cells = board._state
    tokens = {PlayerColor.RED: 0, PlayerColor.BLUE: 0}
    room: dict[PlayerColor, set[Coord]] = {PlayerColor.RED: set(), PlayerColor.BLUE: set()}
    for cell, state in cells.items():
        player = state.player
        if player is None:
            continue
        tokens[player] += 1
        room[player].update(n for n in _NEIGHBOURS[cell] if cells[n].player is None)
    other = color.opponent
    return tokens[color] - tokens[other] + (len(room[color]) - len(room[other])) / 10


def candidate_actions(board: Board, color: PlayerColor) -> list[PlaceAction]:
    """Every legal placement for ``color`` (each cell set once)."""
    own = [cell for cell, state in board._state.items() if state.player == color]
    if own:
        anchors = {n for cell in own for n in _NEIGHBOURS[cell]}
    else:
        anchors = {Coord(r, c) for r in range(BOARD_N) for c in range(BOARD_N)}
    anchors = {cell for cell in anchors if board[cell].player is None}
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
