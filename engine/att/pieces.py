"""The seven tetrominoes, their quarter-turn orientations and notation anchors.

Base shapes are drawn as the letters look (orientation 0); orientation ``k`` is ``k`` clockwise
quarter turns of it. Shapes that repeat under rotation (O; I, S, Z) keep only their distinct
orientations, and a higher orientation number is folded onto the one with the same cells.
"""

from __future__ import annotations

from dataclasses import dataclass

PIECES = "IJLOSTZ"

#: Orientation 0 of each piece, top row first, as the letter looks.
BASE_SHAPES: dict[str, tuple[str, ...]] = {
    "I": ("#", "#", "#", "#"),
    "J": (".#", ".#", "##"),
    "L": ("#.", "#.", "##"),
    "O": ("##", "##"),
    "S": (".##", "##."),
    "T": ("###", ".#."),
    "Z": ("##.", ".##"),
}


@dataclass(frozen=True, slots=True)
class Shape:
    """One orientation of a piece, as offsets from the top-left of its bounding box."""

    piece: str
    orientation: int
    #: ``(row, column)`` offsets, row 0 at the top of the bounding box.
    cells: tuple[tuple[int, int], ...]
    height: int
    width: int
    #: Column bitmask of each row of the shape (bit ``c`` = column offset ``c``), top first.
    row_masks: tuple[int, ...]
    #: Row offset of the notation anchor: the lowest square of the shape's leftmost column.
    anchor_row: int

    def picture(self) -> tuple[str, ...]:
        """The shape as text rows, top first (``#`` block, ``.`` empty)."""
        return tuple(
            "".join("#" if (mask >> c) & 1 else "." for c in range(self.width))
            for mask in self.row_masks
        )


def _rotate_clockwise(cells: frozenset[tuple[int, int]]) -> frozenset[tuple[int, int]]:
    # A clockwise quarter turn maps (row, col) to (col, -row); then shift back into the box.
    turned = [(c, -r) for r, c in cells]
    min_r = min(r for r, _ in turned)
    min_c = min(c for _, c in turned)
    return frozenset((r - min_r, c - min_c) for r, c in turned)


def _make_shape(piece: str, orientation: int, cells: frozenset[tuple[int, int]]) -> Shape:
    height = max(r for r, _ in cells) + 1
    width = max(c for _, c in cells) + 1
    masks = tuple(sum(1 << c for r2, c in cells if r2 == r) for r in range(height))
    anchor_row = max(r for r, c in cells if c == 0)
    return Shape(piece, orientation, tuple(sorted(cells)), height, width, masks, anchor_row)


def _build() -> tuple[dict[str, tuple[Shape, ...]], dict[tuple[str, int], int]]:
    shapes: dict[str, tuple[Shape, ...]] = {}
    fold: dict[tuple[str, int], int] = {}
    for piece, rows in BASE_SHAPES.items():
        cells = frozenset(
            (r, c) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch == "#"
        )
        distinct: list[Shape] = []
        for orientation in range(4):
            match = next((s for s in distinct if frozenset(s.cells) == cells), None)
            if match is None:
                distinct.append(_make_shape(piece, orientation, cells))
                fold[piece, orientation] = orientation
            else:
                fold[piece, orientation] = match.orientation
            cells = _rotate_clockwise(cells)
        shapes[piece] = tuple(distinct)
    return shapes, fold


#: The distinct orientations of each piece (I, S, Z: 2; O: 1; J, L, T: 4).
SHAPES, _FOLD = _build()


def canonical_orientation(piece: str, orientation: int) -> int:
    """The lowest orientation number with the same cells (e.g. ``I2`` is ``I0``)."""
    return _FOLD[piece, orientation % 4]


def shape(piece: str, orientation: int) -> Shape:
    """The shape of ``piece`` turned ``orientation`` quarter turns clockwise."""
    canon = canonical_orientation(piece, orientation)
    for s in SHAPES[piece]:
        if s.orientation == canon:
            return s
    raise AssertionError("unreachable: every canonical orientation has a shape")
