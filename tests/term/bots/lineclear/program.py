"""A test student's bot (dan): fill the row or column closest to complete; clear lines."""

from __future__ import annotations

from typing import Any

from referee.game import BOARD_N, Board, Coord, PlaceAction, PlayerColor
from referee.game.pieces import _TEMPLATES, PieceType, create_piece


class Agent:
    def __init__(self, color: PlayerColor, **referee: Any) -> None:
        self.side = color
        self.state = Board()

    def update(self, color: PlayerColor, action: PlaceAction, **referee: Any) -> None:
        self.state.apply_action(action)

    def action(self, **referee: Any) -> PlaceAction:
        filled_rows = [0] * BOARD_N
        filled_cols = [0] * BOARD_N
        for cell, info in self.state._state.items():
            if info.player is not None:
                filled_rows[cell.r] += 1
                filled_cols[cell.c] += 1
        best_action = None
        best_value = -1
        for action in self.moves():
            value = 0
            for cell in action.coords:
                value += filled_rows[cell.r] + filled_cols[cell.c]
            if value > best_value:
                best_value = value
                best_action = action
        assert best_action is not None
        return best_action

    def moves(self) -> list[PlaceAction]:
        mine = set()
        for cell, info in self.state._state.items():
            if info.player == self.side:
                mine.add(cell)
        targets = set()
        for cell in mine:
            for step in (Coord(1, 0), Coord(0, 1), Coord(BOARD_N - 1, 0), Coord(0, BOARD_N - 1)):
                if self.state[cell + step].player is None:
                    targets.add(cell + step)
        if not mine:  # a first move may go anywhere: near the centre if it is free
            free = [Coord(r, c) for r in range(BOARD_N) for c in range(BOARD_N)]
            free = [c for c in free if self.state[c].player is None]
            targets = set(sorted(free, key=lambda c: abs(c.r - 5) + abs(c.c - 5))[:12])
        out = []
        done = set()
        for target in sorted(targets):
            for piece in PieceType:
                for offset in _TEMPLATES[piece]:
                    coords = create_piece(piece, target - offset).coords
                    if frozenset(coords) in done:
                        continue
                    done.add(frozenset(coords))
                    if all(self.state[c].player is None for c in coords):
                        out.append(PlaceAction(*coords))
        return out
