"""The two kinds of ATT move: the chooser's :class:`Choice` and the placer's :class:`Drop`."""

from __future__ import annotations

from dataclasses import dataclass

from engine.att.pieces import PIECES, canonical_orientation

#: Column letters of Tetris-System notation (no i, j, l: they read like pieces).
COLUMNS = "abcdefghkm"


@dataclass(frozen=True, slots=True)
class Choice:
    """The chooser names the next piece."""

    piece: str

    def __post_init__(self) -> None:
        if self.piece not in PIECES:
            raise ValueError(f"no piece {self.piece!r}; pieces are {', '.join(PIECES)}")

    def __str__(self) -> str:
        return self.piece


@dataclass(frozen=True, slots=True)
class Drop:
    """The placer's move: where the piece comes to rest.

    Identified by the piece, its orientation (folded onto the lowest number with the same cells,
    so ``Drop("I", 2, ...) == Drop("I", 0, ...)``), and the *anchor*: the lowest square of the
    piece's leftmost column, at 0-based ``column`` and 1-based ``row`` counted from the bottom.
    These four numbers fix the four cells, whatever the position.
    """

    piece: str
    orientation: int
    column: int
    row: int

    def __post_init__(self) -> None:
        if self.piece not in PIECES:
            raise ValueError(f"no piece {self.piece!r}; pieces are {', '.join(PIECES)}")
        if not 0 <= self.orientation <= 3:
            raise ValueError(f"orientation {self.orientation} is not 0 to 3")
        if not 0 <= self.column < len(COLUMNS):
            raise ValueError(f"column {self.column} is not 0 to {len(COLUMNS) - 1}")
        if self.row < 1:
            raise ValueError(f"row {self.row} is below row 1")
        object.__setattr__(self, "orientation", canonical_orientation(self.piece, self.orientation))

    @property
    def triad(self) -> str:
        """Piece, orientation (omitted when 0) and anchor column, e.g. ``T1c``."""
        turn = str(self.orientation) if self.orientation else ""
        return f"{self.piece}{turn}{COLUMNS[self.column]}"

    def __str__(self) -> str:
        return f"{self.triad}{self.row}"


AttMove = Choice | Drop
