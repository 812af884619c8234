"""The 19 fixed tetrominoes under the course's names, and pieces placed on the torus."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from referee.game.coord import Coord, Vector2


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


# Offsets from a piece's origin; each includes the origin itself. Bots import this private
# name to enumerate placements, so it keeps the course's name and shape (a dict of lists).
_TEMPLATES: dict[PieceType, list[Vector2]] = {
    PieceType.O: _offsets((0, 0), (0, 1), (1, 0), (1, 1)),
    PieceType.IHorizontal: _offsets((0, 0), (0, 1), (0, 2), (0, 3)),
    PieceType.IVertical: _offsets((0, 0), (1, 0), (2, 0), (3, 0)),
    PieceType.TUp: _offsets((-1, -1), (-1, 0), (-1, 1), (0, 0)),
    PieceType.TRight: _offsets((-1, 1), (0, 0), (0, 1), (1, 1)),
    PieceType.TDown: _offsets((0, 0), (1, -1), (1, 0), (1, 1)),
    PieceType.TLeft: _offsets((-1, -1), (0, -1), (0, 0), (1, -1)),
    PieceType.LUp: _offsets((-2, -1), (-1, -1), (0, -1), (0, 0)),
    PieceType.LRight: _offsets((-1, 0), (-1, 1), (-1, 2), (0, 0)),
    PieceType.LDown: _offsets((0, 0), (0, 1), (1, 1), (2, 1)),
    PieceType.LLeft: _offsets((0, 0), (1, -2), (1, -1), (1, 0)),
    PieceType.JUp: _offsets((-2, 1), (-1, 1), (0, 0), (0, 1)),
    PieceType.JRight: _offsets((0, 0), (1, 0), (1, 1), (1, 2)),
    PieceType.JDown: _offsets((0, -1), (0, 0), (1, -1), (2, -1)),
    PieceType.JLeft: _offsets((-1, -2), (-1, -1), (-1, 0), (0, 0)),
    PieceType.SHorizontal: _offsets((-1, 1), (-1, 2), (0, 0), (0, 1)),
    PieceType.SVertical: _offsets((-2, -1), (-1, -1), (-1, 0), (0, 0)),
    PieceType.ZHorizontal: _offsets((-1, -2), (-1, -1), (0, -1), (0, 0)),
    PieceType.ZVertical: _offsets((0, 0), (1, -1), (1, 0), (2, -1)),
}


@dataclass(frozen=True, slots=True)
class Piece:
    """A tetromino placed on the board: its type and its four cells, in template order."""

    piece_type: PieceType
    coords: list[Coord]

    def __hash__(self) -> int:
        return hash((self.piece_type, tuple(self.coords)))


def create_piece(piece_type: PieceType, origin: Coord) -> Piece:
    """The piece of ``piece_type`` with its origin at ``origin`` (cells wrap around)."""
    return Piece(piece_type, [origin + offset for offset in _TEMPLATES[piece_type]])
