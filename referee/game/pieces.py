"""The 19 fixed tetrominoes under the course's names, and pieces placed on the torus."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import Enum

from engine.errors import EngineError
from engine.tetress.placement import Placement
from engine.tetress.shapes import shape_of
from referee.game.constants import BOARD_N
from referee.game.coord import _CELLS, Coord, Vector2


class PieceType(Enum):
    """One of the 19 fixed tetrominoes (shape and rotation)."""

    O = "O"  # noqa: E741 (the course's name)
    IHorizontal = "I-H"
    IVertical = "I-V"
    TUp = "T-U"
    TRight = "T-R"
    TDown = "T-D"
    TLeft = "T-L"
    LUp = "L-U"
    LRight = "L-R"
    LDown = "L-D"
    LLeft = "L-L"
    JUp = "J-U"
    JRight = "J-R"
    JDown = "J-D"
    JLeft = "J-L"
    SHorizontal = "S-H"
    SVertical = "S-V"
    ZHorizontal = "Z-H"
    ZVertical = "Z-V"

    def __str__(self) -> str:
        return str(self.value)


def _offsets(*pairs: tuple[int, int]) -> list[Vector2]:
    return [Vector2(r, c) for r, c in pairs]


# Offsets from a piece's origin, the origin ``(0, 0)`` first as in the course (bots read
# ``coords[0]`` as the origin); ``TUp`` lists the other cells in the course's own order, the
# rest row by row. Bots import this private name to enumerate placements, so it keeps the
# course's name and shape (a dict of lists).
_TEMPLATES: dict[PieceType, list[Vector2]] = {
    PieceType.O: _offsets((0, 0), (0, 1), (1, 0), (1, 1)),
    PieceType.IHorizontal: _offsets((0, 0), (0, 1), (0, 2), (0, 3)),
    PieceType.IVertical: _offsets((0, 0), (1, 0), (2, 0), (3, 0)),
    PieceType.TUp: _offsets((0, 0), (-1, 0), (-1, 1), (-1, -1)),
    PieceType.TRight: _offsets((0, 0), (-1, 1), (0, 1), (1, 1)),
    PieceType.TDown: _offsets((0, 0), (1, -1), (1, 0), (1, 1)),
    PieceType.TLeft: _offsets((0, 0), (-1, -1), (0, -1), (1, -1)),
    PieceType.LUp: _offsets((0, 0), (-2, -1), (-1, -1), (0, -1)),
    PieceType.LRight: _offsets((0, 0), (-1, 0), (-1, 1), (-1, 2)),
    PieceType.LDown: _offsets((0, 0), (0, 1), (1, 1), (2, 1)),
    PieceType.LLeft: _offsets((0, 0), (1, -2), (1, -1), (1, 0)),
    PieceType.JUp: _offsets((0, 0), (-2, 1), (-1, 1), (0, 1)),
    PieceType.JRight: _offsets((0, 0), (1, 0), (1, 1), (1, 2)),
    PieceType.JDown: _offsets((0, 0), (0, -1), (1, -1), (2, -1)),
    PieceType.JLeft: _offsets((0, 0), (-1, -2), (-1, -1), (-1, 0)),
    PieceType.SHorizontal: _offsets((0, 0), (-1, 1), (-1, 2), (0, 1)),
    PieceType.SVertical: _offsets((0, 0), (-2, -1), (-1, -1), (-1, 0)),
    PieceType.ZHorizontal: _offsets((0, 0), (-1, -2), (-1, -1), (0, -1)),
    PieceType.ZVertical: _offsets((0, 0), (1, -1), (1, 0), (2, -1)),
}


def piece_type_of(coords: Iterable[Coord]) -> PieceType | None:
    """The tetromino that ``coords`` form on the torus, or ``None`` when they form none."""
    try:
        cells = [(c.r, c.c) for c in coords]
        placement = Placement.from_cells(cells)
    except (EngineError, AttributeError, TypeError, ValueError):
        return None
    name = shape_of(placement)
    return None if name is None else PieceType(name)


@dataclass(frozen=True, slots=True)
class Piece:
    """A tetromino on the board: its four cells (``create_piece`` lists the origin first).

    ``Piece(coords)`` raises ``ValueError`` when the cells are not a tetromino; ``.type`` is
    its :class:`PieceType`. Two pieces are equal when their coords are.
    """

    coords: Collection[Coord]

    def __post_init__(self) -> None:
        if piece_type_of(self.coords) is None:
            cells = ", ".join(str(c) for c in self.coords)
            raise ValueError(f"the cells ({cells}) do not form a tetromino")

    @property
    def type(self) -> PieceType:
        """Which of the 19 fixed tetrominoes this piece is."""
        found = piece_type_of(self.coords)
        assert found is not None  # checked on construction
        return found

    def __hash__(self) -> int:
        return hash(frozenset(self.coords))

    def __str__(self) -> str:
        return f"Piece({', '.join(str(c) for c in self.coords)})"


def create_piece(piece_type: PieceType, origin: Coord = Coord(0, 0)) -> Piece:  # noqa: B008
    """The piece of ``piece_type`` with its origin at ``origin`` (cells wrap around)."""
    piece = object.__new__(Piece)
    # A template's cells form its tetromino at every origin (the tests check all of them), so
    # the check ``Piece(...)`` makes is skipped: course bots call this in their search loops.
    offsets = _TEMPLATES[piece_type]
    if type(origin) is Coord:
        # What ``origin + offset`` gives (the shared cell, wrapped), without its method call:
        # a course bot's first move enumerates every placement this way.
        r, c, n = origin.r, origin.c, BOARD_N
        coords = [_CELLS[(r + o.r) % n * n + (c + o.c) % n] for o in offsets]
    else:
        coords = [origin + offset for offset in offsets]
    object.__setattr__(piece, "coords", coords)
    return piece
