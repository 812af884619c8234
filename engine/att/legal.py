"""The legal moves of an ATT position: the placer's resting positions as column masks, and
the view over them (or over the seven choices) that a state hands out."""

from __future__ import annotations

from collections.abc import Iterator

from engine.att.moves import AttMove, Choice, Drop
from engine.att.pieces import PIECES, shape


class Rests:
    """The placer's resting positions in one position, as column masks per (orientation, row)."""

    __slots__ = ("_height", "_piece", "count", "table")

    def __init__(self, piece: str, height: int, table: dict[tuple[int, int], int]) -> None:
        self._piece = piece
        self._height = height
        #: ``(orientation, top row of the box)`` -> mask of leftmost columns.
        self.table = table
        self.count = sum(mask.bit_count() for mask in table.values())

    def key(self, move: Drop) -> tuple[int, int]:
        """The table key of a drop of this piece."""
        s = shape(move.piece, move.orientation)
        return move.orientation, self._height - move.row - s.anchor_row

    def __contains__(self, move: object) -> bool:
        if not isinstance(move, Drop) or move.piece != self._piece:
            return False
        return bool((self.table.get(self.key(move), 0) >> move.column) & 1)

    def __iter__(self) -> Iterator[Drop]:
        drops = _DROPS
        for (orientation, top), mask in self.table.items():
            s = shape(self._piece, orientation)
            row = self._height - top - s.anchor_row
            column = 0
            while mask:
                if mask & 1:
                    key = (self._piece, orientation, column, row)
                    move = drops.get(key)
                    if move is None:
                        move = drops[key] = Drop(*key)
                    yield move
                mask >>= 1
                column += 1


# Drops are immutable and few (piece x orientation x column x row), so they are made once.
_DROPS: dict[tuple[str, int, int, int], Drop] = {}


class LegalMoveView:
    """The legal moves of one position (see :class:`engine.game.LegalMoves`)."""

    __slots__ = ("_choices", "_rests")

    def __init__(self, choices: bool, rests: Rests | None) -> None:
        self._choices = choices
        self._rests = rests

    def __len__(self) -> int:
        if self._choices:
            return len(PIECES)
        return self._rests.count if self._rests is not None else 0

    def __contains__(self, move: object) -> bool:
        if self._choices:
            return isinstance(move, Choice)
        return self._rests is not None and move in self._rests

    def __iter__(self) -> Iterator[AttMove]:
        if self._choices:
            yield from (Choice(p) for p in PIECES)
        elif self._rests is not None:
            yield from self._rests
