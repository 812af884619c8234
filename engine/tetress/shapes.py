"""The 19 fixed tetrominoes and the table of all 2299 placements on the torus.

Every placement has an id ``shape * 121 + anchor``, where ``anchor`` is the cell at the top-left
corner of the shape's bounding box (wrapped). On an 11x11 torus the 2299 placements are all
distinct as cell sets, so a set of four cells names at most one (shape, anchor).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.tetress import tables
from engine.tetress.geometry import CELLS, COL_MASKS, ROW_MASKS, N
from engine.tetress.placement import Placement, remember_canonical


@dataclass(frozen=True, slots=True)
class Shape:
    """One fixed tetromino.

    ``name`` is the course's ``PieceType`` value (e.g. ``T-U``); ``offsets`` are the course's
    offsets from the piece origin; ``cells`` the same shape moved so that its bounding box
    starts at ``(0, 0)``, sorted.
    """

    index: int
    name: str
    offsets: tuple[tuple[int, int], ...]
    cells: tuple[tuple[int, int], ...]

    @property
    def height(self) -> int:
        return max(r for r, _ in self.cells) + 1

    @property
    def width(self) -> int:
        return max(c for _, c in self.cells) + 1


_COURSE_OFFSETS: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    ("O", ((0, 0), (0, 1), (1, 0), (1, 1))),
    ("I-H", ((0, 0), (0, 1), (0, 2), (0, 3))),
    ("I-V", ((0, 0), (1, 0), (2, 0), (3, 0))),
    ("T-U", ((-1, -1), (-1, 0), (-1, 1), (0, 0))),
    ("T-R", ((-1, 1), (0, 0), (0, 1), (1, 1))),
    ("T-D", ((0, 0), (1, -1), (1, 0), (1, 1))),
    ("T-L", ((-1, -1), (0, -1), (0, 0), (1, -1))),
    ("L-U", ((-2, -1), (-1, -1), (0, -1), (0, 0))),
    ("L-R", ((-1, 0), (-1, 1), (-1, 2), (0, 0))),
    ("L-D", ((0, 0), (0, 1), (1, 1), (2, 1))),
    ("L-L", ((0, 0), (1, -2), (1, -1), (1, 0))),
    ("J-U", ((-2, 1), (-1, 1), (0, 0), (0, 1))),
    ("J-R", ((0, 0), (1, 0), (1, 1), (1, 2))),
    ("J-D", ((0, -1), (0, 0), (1, -1), (2, -1))),
    ("J-L", ((-1, -2), (-1, -1), (-1, 0), (0, 0))),
    ("S-H", ((-1, 1), (-1, 2), (0, 0), (0, 1))),
    ("S-V", ((-2, -1), (-1, -1), (-1, 0), (0, 0))),
    ("Z-H", ((-1, -2), (-1, -1), (0, -1), (0, 0))),
    ("Z-V", ((0, 0), (1, -1), (1, 0), (2, -1))),
)


def _normalise(offsets: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    r0 = min(r for r, _ in offsets)
    c0 = min(c for _, c in offsets)
    return tuple(sorted((r - r0, c - c0) for r, c in offsets))


SHAPES: tuple[Shape, ...] = tuple(
    Shape(i, name, offsets, _normalise(offsets))
    for i, (name, offsets) in enumerate(_COURSE_OFFSETS)
)
SHAPE_BY_NAME: dict[str, Shape] = {s.name: s for s in SHAPES}
NUM_SHAPES = len(SHAPES)
NUM_PLACEMENTS = NUM_SHAPES * CELLS


def _placement_cells(shape: Shape, anchor: int) -> list[int]:
    ar, ac = divmod(anchor, N)
    return sorted(((ar + dr) % N) * N + (ac + dc) % N for dr, dc in shape.cells)


#: The cell mask of each placement id (stored at install: :mod:`.tables`).
PLACEMENT_MASKS: tuple[int, ...] = tables.stored("PLACEMENT_MASKS") or tuple(
    sum(1 << i for i in _placement_cells(shape, anchor))
    for shape in SHAPES
    for anchor in range(CELLS)
)
#: The interned :class:`Placement` of each placement id.
PLACEMENTS: tuple[Placement, ...] = (
    Placement.known_all(PLACEMENT_MASKS, _cells, _texts)
    if (_cells := tables.stored("PLACEMENT_CELLS")) and (_texts := tables.stored("PLACEMENT_TEXTS"))
    else tuple(Placement(m) for m in PLACEMENT_MASKS)
)
#: Placement id by cell mask.
PID_BY_MASK: dict[int, int] = {m: pid for pid, m in enumerate(PLACEMENT_MASKS)}
assert len(PID_BY_MASK) == NUM_PLACEMENTS, "placements on the torus must be distinct"
remember_canonical(PLACEMENTS)


def _lines(cells: tuple[int, ...]) -> tuple[int, ...]:
    """The rows, then the columns, that ``cells`` touch, each in board order."""
    rows = sorted({cell // N for cell in cells})
    cols = sorted({cell % N for cell in cells})
    return tuple(ROW_MASKS[r] for r in rows) + tuple(COL_MASKS[c] for c in cols)


#: The row and column masks each placement touches: the only lines it can complete.
PLACEMENT_LINES: tuple[tuple[int, ...], ...] = tables.stored("PLACEMENT_LINES") or tuple(
    _lines(p.cells) for p in PLACEMENTS
)


def placement_id(placement: Placement) -> int | None:
    """The id of a placement, or ``None`` when its cells are not a tetromino."""
    return PID_BY_MASK.get(placement.mask)


def shape_of(placement: Placement) -> str | None:
    """The name of the fixed tetromino the placement forms (wrap-aware), or ``None``."""
    pid = PID_BY_MASK.get(placement.mask)
    return None if pid is None else SHAPES[pid // CELLS].name


def placement_of(shape: str | Shape, anchor: int | tuple[int, int]) -> Placement:
    """The placement of ``shape`` whose bounding box starts at ``anchor`` (wrapped)."""
    s = SHAPE_BY_NAME[shape] if isinstance(shape, str) else shape
    cell = anchor if isinstance(anchor, int) else (anchor[0] % N) * N + anchor[1] % N
    return PLACEMENTS[s.index * CELLS + cell]
