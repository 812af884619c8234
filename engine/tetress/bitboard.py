"""Legal-move generation on an "unrolled torus" of Python ints.

The 11x11 torus is laid out on a 16x16 grid of bits (bit ``16 * R + C``) where the cell
``(r, c)`` appears at every ``(R, C)`` with ``R - 1 ≡ r`` and ``C - 1 ≡ c`` (mod 11). Row ``R = 0``
holds a copy of row 10, rows 1..11 hold rows 0..10, and rows 12..15 repeat rows 0..3 (columns
alike). A shape whose bounding box starts at the anchor ``(R, C)`` with ``1 <= R, C <= 11`` then
covers bits ``(R + dr, C + dc)`` with ``dr, dc <= 3``, all inside the grid, and each of those
cells has its four neighbours inside the grid too. So the cells of a shape at *every* anchor are
reached by plain shifts, with no wrap masking: the anchors where a shape fits are the AND of
the empty-cell board shifted by each of the shape's offsets.
"""

from __future__ import annotations

from engine.tetress import tables
from engine.tetress.geometry import CELLS, COL_MASKS, ROW_MASKS, N
from engine.tetress.shapes import PLACEMENT_LINES, PLACEMENT_MASKS, SHAPES

W = 16
ALL = (1 << (W * W)) - 1
#: Anchor bits: ``(R, C)`` with ``1 <= R, C <= 11``, i.e. one bit per cell of the torus.
ANCHORS = sum(1 << (W * (r + 1) + c + 1) for r in range(N) for c in range(N))
#: The cell index of each anchor bit position (``-1`` for non-anchor positions).
ANCHOR_CELL: tuple[int, ...] = tables.stored("ANCHOR_CELL") or tuple(
    ((pos // W - 1) * N + pos % W - 1) if (1 <= pos // W <= N and 1 <= pos % W <= N) else -1
    for pos in range(W * W)
)
#: The anchor bit position of each cell.
CELL_POS: tuple[int, ...] = tuple(W * (i // N + 1) + i % N + 1 for i in range(CELLS))

_ROW_SOURCE: tuple[int, ...] = tuple((R - 1) % N for R in range(W))
# The 16-bit replicated row for each 11-bit row pattern: layout column ``C`` holds row column
# ``(C - 1) % 11``, so column 10 goes to bit 0, columns 0..10 to bits 1..11, columns 0..3 again
# to bits 12..15.
_ROW_REPL: tuple[int, ...] = tables.stored("ROW_REPL") or tuple(
    (p >> (N - 1)) | (p << 1) | ((p & 0xF) << (N + 1)) for p in range(1 << N)
)
_ROW_BITS = (1 << N) - 1


def replicate(mask: int) -> int:
    """The 256-bit unrolled layout of a 121-bit cell mask."""
    rows = [_ROW_REPL[(mask >> (N * r)) & _ROW_BITS] for r in range(N)]
    out = 0
    for R in range(W):
        out |= rows[_ROW_SOURCE[R]] << (W * R)
    return out


#: The unrolled layout of each single cell: a placement's is the OR of its four cells'.
_CELL_REPL: tuple[int, ...] = tables.stored("CELL_REPL") or tuple(
    replicate(1 << i) for i in range(CELLS)
)


def _replicate_cells(mask: int) -> int:
    """:func:`replicate` of a mask with few cells, one table look-up per cell."""
    out = 0
    while mask:
        low = mask & -mask
        out |= _CELL_REPL[low.bit_length() - 1]
        mask ^= low
    return out


#: The unrolled layout of every placement, for O(1) place and take back.
PLACEMENT_REPL: tuple[int, ...] = tables.stored("PLACEMENT_REPL") or tuple(
    _replicate_cells(m) for m in PLACEMENT_MASKS
)
# Placements touch only the 22 rows and columns: each line is unrolled once and shared.
_LINE_REPL: dict[int, int] = {line: replicate(line) for line in (*ROW_MASKS, *COL_MASKS)}
#: The unrolled layout of the lines in :data:`~engine.tetress.shapes.PLACEMENT_LINES`.
PLACEMENT_LINES_REPL: tuple[tuple[int, ...], ...] = tables.stored("PLACEMENT_LINES_REPL") or tuple(
    tuple(_LINE_REPL[line] for line in lines) for lines in PLACEMENT_LINES
)

#: Bit shifts of each shape's cells relative to its anchor.
SHAPE_SHIFTS: tuple[tuple[int, ...], ...] = tuple(
    tuple(W * dr + dc for dr, dc in shape.cells) for shape in SHAPES
)


def dilate(own: int) -> int:
    """Own tokens plus their four neighbours (valid on rows/columns 1..14 of the layout)."""
    return own | (own << 1) | (own >> 1) | (own << W) | (own >> W)


def legal_masks_generic(own: int, occupied: int, first: bool) -> tuple[int, ...]:
    """Per shape, the anchor bits where it is legal (reference version, one shift per cell)."""
    empty = ALL ^ occupied
    near = dilate(own)
    out = []
    for shifts in SHAPE_SHIFTS:
        fit = ANCHORS
        adj = 0
        for s in shifts:
            fit &= empty >> s
            adj |= near >> s
        out.append(fit if first else fit & adj)
    return tuple(out)


def legal_masks(own: int, occupied: int, first: bool) -> tuple[int, ...]:
    """Per shape (in :data:`SHAPES` order), the anchor bits where it is legal.

    Each shape is split into two runs of one to four cells so that the domino and triomino
    results, and shifted copies used by several shapes, are shared: the fit of a shape (all
    four cells empty) is the AND, and its contact with own tokens the OR, of two shifted runs.
    The anchor mask is applied once to each unshifted run rather than to every shape.
    Equal to :func:`legal_masks_generic` (the tests check it).
    """
    fits = _fits(occupied)
    return fits if first else _touching(own, fits)


def _fits(occupied: int) -> tuple[int, ...]:
    """Per shape, the anchor bits where all four of its cells are empty."""
    a = ANCHORS
    e = ALL ^ occupied
    h2 = e & (e >> 1)
    h3 = h2 & (e >> 2)
    v2 = e & (e >> W)
    v3 = v2 & (e >> 2 * W)
    ea = e & a
    h2a = h2 & a
    h3a = h3 & a
    v2a = v2 & a
    v3a = v3 & a
    e1 = e >> 1
    ew = e >> W
    ew1 = e >> (W + 1)
    h2w = h2 >> W
    h3w = h3 >> W
    v3_1 = v3 >> 1
    v2w1 = v2 >> (W + 1)
    fits = (
        h2a & h2w,  # O
        h2a & (h2 >> 2),  # I-H
        v2a & (v2 >> 2 * W),  # I-V
        h3a & ew1,  # T-U
        v3_1 & ew & a,  # T-R
        e1 & h3w & a,  # T-D
        v3a & ew1,  # T-L
        v3a & (e >> (2 * W + 1)),  # L-U
        h3a & ew,  # L-R
        h2a & v2w1,  # L-D
        (e >> 2) & h3w & a,  # L-L
        v3_1 & (e >> 2 * W) & a,  # J-U
        ea & h3w,  # J-R
        v3a & e1,  # J-D
        h3a & (e >> (W + 2)),  # J-L
        (h2 >> 1) & h2w & a,  # S-H
        v2a & v2w1,  # S-V
        h2a & (h2 >> (W + 1)),  # Z-H
        (v2 >> 1) & (v2 >> W) & a,  # Z-V
    )
    return fits


def _touching(own: int, fits: tuple[int, ...]) -> tuple[int, ...]:
    """Of ``fits``, per shape, the anchor bits where a cell of the shape touches own tokens."""
    d = own | (own << 1) | (own >> 1) | (own << W) | (own >> W)
    g2 = d | (d >> 1)
    g3 = g2 | (d >> 2)
    u2 = d | (d >> W)
    u3 = u2 | (d >> 2 * W)
    d1 = d >> 1
    dw = d >> W
    dw1 = d >> (W + 1)
    g2w = g2 >> W
    g3w = g3 >> W
    u3_1 = u3 >> 1
    u2w1 = u2 >> (W + 1)
    return (
        fits[0] & (g2 | g2w),
        fits[1] & (g2 | (g2 >> 2)),
        fits[2] & (u2 | (u2 >> 2 * W)),
        fits[3] & (g3 | dw1),
        fits[4] & (u3_1 | dw),
        fits[5] & (d1 | g3w),
        fits[6] & (u3 | dw1),
        fits[7] & (u3 | (d >> (2 * W + 1))),
        fits[8] & (g3 | dw),
        fits[9] & (g2 | u2w1),
        fits[10] & ((d >> 2) | g3w),
        fits[11] & (u3_1 | (d >> 2 * W)),
        fits[12] & (d | g3w),
        fits[13] & (u3 | d1),
        fits[14] & (g3 | (d >> (W + 2))),
        fits[15] & ((g2 >> 1) | g2w),
        fits[16] & (u2 | u2w1),
        fits[17] & (g2 | (g2 >> (W + 1))),
        fits[18] & ((u2 >> 1) | (u2 >> W)),
    )


def has_legal(own: int, occupied: int, first: bool) -> bool:
    """``any(legal_masks(own, occupied, first))``, stopping at the first shape that fits.

    The referee asks this before every move (has the side to move lost?) and never needs the
    masks themselves; on most positions the first or second shape answers it, at a fraction
    of the cost of every shape's masks.
    """
    empty = ALL ^ occupied
    near = 0 if first else own | (own << 1) | (own >> 1) | (own << W) | (own >> W)
    for shifts in SHAPE_SHIFTS:
        fit = ANCHORS
        for s in shifts:
            fit &= empty >> s
            if not fit:
                break
        else:
            if first:
                return True
            for s in shifts:
                if fit & (near >> s):
                    return True
    return False
