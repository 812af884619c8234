"""The course's value types in referee.game behave as course bots rely on."""

from __future__ import annotations

import operator
import pickle
import subprocess
import sys

import pytest

import referee.game as game
from referee.game import (
    BOARD_N,
    MAX_TURNS,
    Action,
    Coord,
    Direction,
    IllegalActionException,
    Piece,
    PieceType,
    PlaceAction,
    PlayerColor,
    PlayerException,
    Vector2,
    create_piece,
)
from referee.game.pieces import _TEMPLATES

# The table from docs/compat (course-agent-api.md), written out independently of the code.
COURSE_PIECES = {
    "O": ("O", [(0, 0), (0, 1), (1, 0), (1, 1)]),
    "IHorizontal": ("I-H", [(0, 0), (0, 1), (0, 2), (0, 3)]),
    "IVertical": ("I-V", [(0, 0), (1, 0), (2, 0), (3, 0)]),
    "TUp": ("T-U", [(-1, -1), (-1, 0), (-1, 1), (0, 0)]),
    "TRight": ("T-R", [(-1, 1), (0, 0), (0, 1), (1, 1)]),
    "TDown": ("T-D", [(0, 0), (1, -1), (1, 0), (1, 1)]),
    "TLeft": ("T-L", [(-1, -1), (0, -1), (0, 0), (1, -1)]),
    "LUp": ("L-U", [(-2, -1), (-1, -1), (0, -1), (0, 0)]),
    "LRight": ("L-R", [(-1, 0), (-1, 1), (-1, 2), (0, 0)]),
    "LDown": ("L-D", [(0, 0), (0, 1), (1, 1), (2, 1)]),
    "LLeft": ("L-L", [(0, 0), (1, -2), (1, -1), (1, 0)]),
    "JUp": ("J-U", [(-2, 1), (-1, 1), (0, 0), (0, 1)]),
    "JRight": ("J-R", [(0, 0), (1, 0), (1, 1), (1, 2)]),
    "JDown": ("J-D", [(0, -1), (0, 0), (1, -1), (2, -1)]),
    "JLeft": ("J-L", [(-1, -2), (-1, -1), (-1, 0), (0, 0)]),
    "SHorizontal": ("S-H", [(-1, 1), (-1, 2), (0, 0), (0, 1)]),
    "SVertical": ("S-V", [(-2, -1), (-1, -1), (-1, 0), (0, 0)]),
    "ZHorizontal": ("Z-H", [(-1, -2), (-1, -1), (0, -1), (0, 0)]),
    "ZVertical": ("Z-V", [(0, 0), (1, -1), (1, 0), (2, -1)]),
}


def test_constants() -> None:
    """BOARD_N and MAX_TURNS have the course's values and are re-exported by the package."""
    assert (BOARD_N, MAX_TURNS) == (11, 150)
    from referee.game.constants import BOARD_N as n
    from referee.game.constants import MAX_TURNS as t

    assert (n, t) == (11, 150)


def test_submodules_export_the_names_bots_import() -> None:
    """Every submodule course bots import from exists and holds the expected names."""
    from referee.game.actions import Action, PlaceAction  # noqa: F401
    from referee.game.board import Board, CellState  # noqa: F401
    from referee.game.coord import Coord, Direction, Vector2  # noqa: F401
    from referee.game.exceptions import IllegalActionException, PlayerException  # noqa: F401
    from referee.game.pieces import Piece, PieceType, create_piece  # noqa: F401
    from referee.game.player import PlayerColor  # noqa: F401

    for name in ("Board", "Coord", "Direction", "PlaceAction", "PlayerColor", "PieceType"):
        assert hasattr(game, name)


@pytest.mark.slow
def test_import_is_light() -> None:
    """Importing referee.game pulls in neither gRPC nor the server machinery."""
    code = (
        "import sys, referee.game, referee.game.board; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('grpc', 'sqlalchemy', 'structlog')"
        " or m in ('referee.server.app', 'referee.match.runner', 'client_sdk')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_player_color() -> None:
    """PlayerColor: values 0/1, str RED/BLUE, index 0/1, int +1/-1, opponent, pickles."""
    red, blue = PlayerColor.RED, PlayerColor.BLUE
    assert (red.value, blue.value) == (0, 1)
    assert (str(red), str(blue)) == ("RED", "BLUE")
    assert (operator.index(red), operator.index(blue)) == (0, 1)
    assert (int(red), int(blue)) == (1, -1)
    assert ["a", "b"][blue] == "b"
    assert red.opponent is blue and blue.opponent is red
    assert pickle.loads(pickle.dumps(blue)) is blue


def test_vector2_arithmetic() -> None:
    """Vector2 adds, subtracts, negates, scales, orders, iterates and steps."""
    v = Vector2(2, -3)
    assert v + Vector2(1, 1) == Vector2(3, -2)
    assert v - Vector2(1, 1) == Vector2(1, -4)
    assert -v == Vector2(-2, 3)
    assert v * 3 == Vector2(6, -9)
    assert Vector2(1, 5) < Vector2(2, 0) and Vector2(1, 0) < Vector2(1, 1)
    r, c = v
    assert (r, c) == (2, -3)
    assert v.down() == Vector2(3, -3) and v.up(2) == Vector2(0, -3)
    assert v.left() == Vector2(2, -4) and v.right(3) == Vector2(2, 0)
    assert v + Direction.Down == Vector2(3, -3)
    with pytest.raises(AttributeError):
        v.r = 5  # type: ignore[misc]


def test_direction() -> None:
    """Direction: course values, .r/.c, negation, scaling and lookup by tuple."""
    assert Direction.Down.value == Vector2(1, 0)
    assert Direction.Up.value == Vector2(-1, 0)
    assert Direction.Left.value == Vector2(0, -1)
    assert Direction.Right.value == Vector2(0, 1)
    assert (Direction.Left.r, Direction.Left.c) == (0, -1)
    assert -Direction.Up is Direction.Down and -Direction.Left is Direction.Right
    assert Direction.Right * 3 == Vector2(0, 3)
    assert isinstance(Direction.Right * 3, Vector2)
    assert Direction((1, 0)) is Direction.Down
    assert Direction((0, -1)) is Direction.Left
    assert Direction(Vector2(-1, 0)) is Direction.Up
    with pytest.raises(ValueError):
        Direction((1, 1))


def test_coord_bounds_text_and_order() -> None:
    """Coord rejects cells outside 0..10, prints r-c, is ordered, hashable and frozen."""
    assert str(Coord(3, 10)) == "3-10"
    for r, c in [(-1, 0), (0, 11), (11, 0), (0, -1)]:
        with pytest.raises(ValueError):
            Coord(r, c)
    assert Coord(1, 2) < Coord(1, 3) < Coord(2, 0)
    assert len({Coord(1, 2), Coord(1, 2), Coord(2, 1)}) == 2
    assert isinstance(Coord(0, 0), Vector2)
    assert pickle.loads(pickle.dumps(Coord(4, 5))) == Coord(4, 5)


def test_coord_wraps_modulo_11() -> None:
    """Coord +/- a Vector2 or Direction wraps around the torus and stays a Coord."""
    assert Coord(10, 10) + Vector2(1, 1) == Coord(0, 0)
    assert Coord(0, 0) - Vector2(1, 1) == Coord(10, 10)
    assert Coord(0, 5) + Direction.Up == Coord(10, 5)
    assert Coord(5, 0) - Direction.Right == Coord(5, 10)
    assert Coord(2, 3) + Direction.Down * 20 == Coord(0, 3)
    assert type(Coord(0, 0) + Vector2(3, 4)) is Coord
    assert Coord(10, 0).down() == Coord(0, 0) and Coord(0, 0).left(2) == Coord(0, 9)


def test_piece_types_and_templates() -> None:
    """PieceType has the course's 19 members and values; _TEMPLATES their exact offsets."""
    assert [p.name for p in PieceType] == list(COURSE_PIECES)
    for piece in PieceType:
        value, offsets = COURSE_PIECES[piece.name]
        assert piece.value == value
        assert sorted(_TEMPLATES[piece]) == sorted(Vector2(r, c) for r, c in offsets)
    assert PieceType("T-U") is PieceType.TUp


def test_templates_agree_with_engine_shapes() -> None:
    """The course templates name the same 19 shapes as the engine, in the same order."""
    from engine.tetress import SHAPES

    assert [s.name for s in SHAPES] == [p.value for p in PieceType]
    for shape, piece in zip(SHAPES, PieceType, strict=True):
        assert sorted(Vector2(r, c) for r, c in shape.offsets) == sorted(_TEMPLATES[piece])


def test_create_piece_wraps() -> None:
    """create_piece puts the template at the origin, wrapping across the edges."""
    piece = create_piece(PieceType.IHorizontal, Coord(0, 9))
    assert piece.coords == [Coord(0, 9), Coord(0, 10), Coord(0, 0), Coord(0, 1)]
    piece = create_piece(PieceType.TUp, Coord(0, 0))
    assert set(piece.coords) == {Coord(10, 10), Coord(10, 0), Coord(10, 1), Coord(0, 0)}


def test_create_piece_makes_the_checked_piece_of_its_type_everywhere() -> None:
    """create_piece skips Piece's check: at every origin its cells are the piece Piece(...)
    accepts, of the type asked for, and adding a Vector2 or a Direction to a Coord agree."""
    from referee.game import Direction

    for piece_type in PieceType:
        for r in range(11):
            for c in range(11):
                made = create_piece(piece_type, Coord(r, c))
                checked = Piece([Coord(r, c) + offset for offset in _TEMPLATES[piece_type]])
                assert made == checked and hash(made) == hash(checked)
                assert made.type is piece_type
    for direction in Direction:
        assert Coord(10, 0) + direction == Coord(10, 0) + direction.value


def test_templates_list_the_origin_first() -> None:
    """Every template starts with the origin; TUp keeps the course's order of the other cells."""
    for piece in PieceType:
        assert _TEMPLATES[piece][0] == Vector2(0, 0), piece
        assert create_piece(piece, Coord(4, 6)).coords[0] == Coord(4, 6)
    assert _TEMPLATES[PieceType.TUp] == [
        Vector2(0, 0),
        Vector2(-1, 0),
        Vector2(-1, 1),
        Vector2(-1, -1),
    ]


def test_create_piece_default_origin() -> None:
    """create_piece(piece_type) puts the origin at Coord(0, 0)."""
    assert create_piece(PieceType.O) == create_piece(PieceType.O, Coord(0, 0))
    assert create_piece(PieceType.O).coords == [Coord(0, 0), Coord(0, 1), Coord(1, 0), Coord(1, 1)]


def test_piece_from_coords() -> None:
    """Piece(coords) builds a piece; cells that are not a tetromino raise ValueError."""
    cells = [Coord(3, 3), Coord(3, 4), Coord(4, 3), Coord(4, 4)]
    piece = Piece(cells)
    assert piece.coords == cells
    assert piece == Piece(list(cells)) and hash(piece) == hash(Piece(list(cells)))
    assert str(piece) == "Piece(3-3, 3-4, 4-3, 4-4)"
    with pytest.raises(ValueError, match="tetromino"):
        Piece([Coord(0, 0), Coord(0, 2), Coord(0, 4), Coord(0, 6)])
    with pytest.raises(ValueError):
        Piece([Coord(0, 0), Coord(0, 1)])


def test_piece_type() -> None:
    """Piece.type names the tetromino, also for cells wrapping around the torus."""
    for piece_type in PieceType:
        for origin in (Coord(5, 5), Coord(0, 0), Coord(10, 10)):
            assert create_piece(piece_type, origin).type is piece_type
    assert (
        Piece([Coord(0, 10), Coord(0, 0), Coord(0, 1), Coord(0, 2)]).type is PieceType.IHorizontal
    )


def test_place_action() -> None:
    """PlaceAction: .coords is a set, str keeps the given order, frozen, pickles, Action alias."""
    cells = (Coord(7, 4), Coord(6, 3), Coord(7, 2), Coord(7, 3))
    action = PlaceAction(*cells)
    assert action.coords == set(cells) and isinstance(action.coords, set)
    assert str(action) == "PLACE(7-4, 6-3, 7-2, 7-3)"
    assert pickle.loads(pickle.dumps(action)) == action
    assert Action is PlaceAction
    assert hash(action) == hash(PlaceAction(*cells))
    with pytest.raises(AttributeError):
        action.c1 = Coord(0, 0)  # type: ignore[misc]


def test_exceptions() -> None:
    """IllegalActionException is a PlayerException carrying its message and player."""
    exc = IllegalActionException("cell 1-1 is occupied", PlayerColor.BLUE)
    assert isinstance(exc, PlayerException)
    assert str(exc) == "cell 1-1 is occupied" and exc.player is PlayerColor.BLUE
