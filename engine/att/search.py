"""The placer's search: every resting position reachable from the entry positions.

The well is a tuple of row bitmasks, top row first (bit ``c`` = column ``c``). For one
orientation, the set of columns where the piece's bounding box fits with its top at row ``r``
is one bitmask ``fits[r]``; the placer's positions before a slide at row ``r`` are another.
A slide fills each contiguous run of ``fits[r]`` that holds a position; a drop keeps the
columns that also fit one row lower; the others come to rest. One sweep from the top row down
therefore visits every slide/drop state, without enumerating move sequences.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from engine.att.pieces import SHAPES, Shape

Rows = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Geometry:
    """Per-size tables: which columns a shape row cannot take over a given board row."""

    width: int
    height: int
    full: int
    middle: int
    #: ``forbid[mask][row]``: columns ``c`` where ``mask << c`` hits a block of ``row``.
    forbid: dict[int, tuple[int, ...]]
    #: Per (piece, orientation): columns where the shape stays on the board.
    valid: dict[tuple[str, int], int]
    #: Per (piece, orientation): columns where the shape's top row covers a middle column.
    entry: dict[tuple[str, int], int]


def middle_columns(width: int) -> tuple[int, int]:
    """The two middle columns; for an odd width both are the centre column."""
    return (width - 1) // 2, width // 2


@cache
def geometry(width: int, height: int) -> Geometry:
    """The tables for a well of this size (built once)."""
    full = (1 << width) - 1
    mid_a, mid_b = middle_columns(width)
    middle = (1 << mid_a) | (1 << mid_b)
    masks = {m for shapes in SHAPES.values() for s in shapes for m in s.row_masks}
    forbid: dict[int, tuple[int, ...]] = {}
    for mask in masks:
        bits = [b for b in range(width) if (mask >> b) & 1]
        table = []
        for row in range(full + 1):
            hit = 0
            for b in bits:
                hit |= row >> b
            table.append(hit)
        forbid[mask] = tuple(table)
    valid: dict[tuple[str, int], int] = {}
    entry: dict[tuple[str, int], int] = {}
    for shapes in SHAPES.values():
        for s in shapes:
            key = (s.piece, s.orientation)
            ok = (1 << (width - s.width + 1)) - 1 if s.width <= width else 0
            valid[key] = ok
            entry[key] = sum(
                1 << c for c in range(width) if (ok >> c) & 1 and (s.row_masks[0] << c) & middle
            )
    return Geometry(width, height, full, middle, forbid, valid, entry)


def first_filled_row(rows: Rows) -> int:
    """Index of the highest row holding a block (``len(rows)`` when the well is empty)."""
    for index, row in enumerate(rows):
        if row:
            return index
    return len(rows)


def _fits(geo: Geometry, rows: Rows, s: Shape, r: int) -> int:
    f = geo.valid[s.piece, s.orientation]
    for i, mask in enumerate(s.row_masks):
        f &= ~geo.forbid[mask][rows[r + i]]
    return f


def _slide(start: int, free: int) -> int:
    """Every column reachable by sliding from ``start`` without leaving ``free``."""
    reach = start
    while True:
        grown = (reach | (reach << 1) | (reach >> 1)) & free
        if grown == reach:
            return reach
        reach = grown


def rest_masks(
    geo: Geometry, rows: Rows, s: Shape, top: int | None = None
) -> list[tuple[int, int]]:
    """``(row of the box top, column mask)`` of every resting position of shape ``s``."""
    height = geo.height
    if s.height > height:
        return []
    last = height - s.height
    valid = geo.valid[s.piece, s.orientation]
    free = _fits(geo, rows, s, 0)
    here = free & geo.entry[s.piece, s.orientation]
    if not here:
        return []
    if top is None:
        top = first_filled_row(rows)
    r = 0
    if top - s.height >= 1:
        # Rows above the stack are empty: the piece can be anywhere down to just above it.
        r = min(top - s.height, last)
        here = free = valid
    found: list[tuple[int, int]] = []
    while True:
        slid = valid if free == valid else _slide(here, free)
        if r == last:
            found.append((r, slid))
            return found
        below = _fits(geo, rows, s, r + 1)
        dropped = slid & below
        resting = slid & ~dropped
        if resting:
            found.append((r, resting))
        if not dropped:
            return found
        here, free, r = dropped, below, r + 1


@dataclass(frozen=True, slots=True)
class Path:
    """A witness: the entry position, then the slide made at each row (drops in between).

    The piece enters with the top of its box in the top row and its leftmost column at
    ``entry_column``; ``slides[i]`` is the signed slide (columns, + = right) made with the box
    top at row ``i``; after the last slide the drop is blocked.
    """

    piece: str
    orientation: int
    entry_column: int
    slides: tuple[int, ...]

    @property
    def rest_column(self) -> int:
        """Leftmost column of the piece where it comes to rest."""
        return self.entry_column + sum(self.slides)

    @property
    def rest_top(self) -> int:
        """Row index (top row 0) of the top of the piece's box where it comes to rest."""
        return len(self.slides) - 1


def witness(geo: Geometry, rows: Rows, s: Shape, rest_top: int, rest_column: int) -> Path | None:
    """A path to the resting position, or ``None`` when it is not reachable."""
    if s.height > geo.height or rest_top > geo.height - s.height:
        return None
    valid = geo.valid[s.piece, s.orientation]
    frees: list[int] = []
    heres: list[int] = []
    free = _fits(geo, rows, s, 0)
    here = free & geo.entry[s.piece, s.orientation]
    for r in range(rest_top + 1):
        if not here:
            return None
        frees.append(free)
        heres.append(here)
        slid = _slide(here, free)
        if r == rest_top:
            if not (slid >> rest_column) & 1:
                return None
            if r < geo.height - s.height and (_fits(geo, rows, s, r + 1) >> rest_column) & 1:
                return None
            break
        free = _fits(geo, rows, s, r + 1)
        here = slid & free & valid
    # Walk back up: at each row pick the start nearest the column the slide must reach.
    slides: list[int] = []
    target = rest_column
    for r in range(rest_top, -1, -1):
        run = _slide(1 << target, frees[r])
        starts = heres[r] & run
        start = min(
            (c for c in range(geo.width) if (starts >> c) & 1), key=lambda c: abs(c - target)
        )
        slides.append(target - start)
        target = start
    slides.reverse()
    return Path(s.piece, s.orientation, target, tuple(slides))
