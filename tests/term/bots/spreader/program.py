"""A test student's bot (cat): stay far from the opponent and keep many empty cells near."""

from __future__ import annotations

import itertools
from typing import Any

from referee.game import BOARD_N, Board, Coord, PlaceAction, PlayerColor
from referee.game.pieces import _TEMPLATES, PieceType, create_piece


def torus_distance(a: Coord, b: Coord) -> int:
    dr = abs(a.r - b.r)
    dc = abs(a.c - b.c)
    return min(dr, BOARD_N - dr) + min(dc, BOARD_N - dc)


class Agent:
    def __init__(self, color: PlayerColor, **referee: Any) -> None:
        self._me = color
        self._b = Board()

    def update(self, color: PlayerColor, action: PlaceAction, **referee: Any) -> None:
        self._b.apply_action(action)

    def _free(self, cell: Coord) -> bool:
        return self._b[cell].player is None

    def _options(self) -> list[PlaceAction]:
        ours = [cell for cell in self._b._state if self._b[cell].player == self._me]
        grid = [Coord(r, c) for r, c in itertools.product(range(BOARD_N), repeat=2)]
        if ours:
            near = set()
            for cell in ours:
                for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    near.add(Coord((cell.r + dr) % BOARD_N, (cell.c + dc) % BOARD_N))
            grid = [cell for cell in grid if cell in near]
        result = []
        seen = set()
        for cell in grid:
            if not self._free(cell):
                continue
            for piece in PieceType:
                for offset in _TEMPLATES[piece]:
                    coords = create_piece(piece, cell - offset).coords
                    key = frozenset(coords)
                    if key not in seen and all(self._free(x) for x in coords):
                        seen.add(key)
                        result.append(PlaceAction(*coords))
        return result

    def action(self, **referee: Any) -> PlaceAction:
        theirs = [cell for cell in self._b._state if self._b[cell].player == self._me.opponent]

        def value(option: PlaceAction) -> tuple[int, list[Coord]]:
            if not theirs:
                return (0, sorted(option.coords))
            gap = min(torus_distance(x, y) for x in option.coords for y in theirs)
            return (gap, sorted(option.coords))

        return max(self._options(), key=value)
