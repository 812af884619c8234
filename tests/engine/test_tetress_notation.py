"""The PLACE notation and the Placement value type."""

from __future__ import annotations

import pickle

import pytest

from engine.errors import NotationError
from engine.tetress import Placement, Tetress


def test_str_is_ascending_canonical_form() -> None:
    """str() lists the cells as r-c in ascending cell order, whatever the input order."""
    move = Placement.from_cells([(7, 4), (6, 3), (7, 2), (7, 3)])
    assert str(move) == "PLACE(6-3, 7-2, 7-3, 7-4)"
    assert move.cells == (69, 79, 80, 81)
    assert move.coords == ((6, 3), (7, 2), (7, 3), (7, 4))
    assert move.mask == (1 << 69) | (1 << 79) | (1 << 80) | (1 << 81)


@pytest.mark.parametrize(
    "text",
    [
        "PLACE(6-3, 7-2, 7-3, 7-4)",
        "PLACE(7-4,7-3,7-2,6-3)",
        "  place ( 7 - 4 , 6-3,  7-2 ,7-3 )  ",
        "PLACE[(6,3), (7,2), (7,3), (7,4)]",
        "PLACE[ ( 7 , 4 ),(6,3),(7,2),(7,3) ]",
        "PLACE((6,3), (7,2), (7,3), (7,4))",
    ],
)
def test_parse_accepts_any_order_and_both_forms(text: str) -> None:
    """Cells in any order, any spacing, ``r-c`` or ``(r, c)`` all name the same placement."""
    assert Placement.parse(text) == Placement.from_cells([69, 79, 80, 81])


@pytest.mark.parametrize(
    "text",
    [
        "",
        "PLACE()",
        "PLACE(6-3, 7-2, 7-3)",  # three cells
        "PLACE(6-3, 7-2, 7-3, 7-4, 7-5)",  # five cells
        "PLACE(6-3, 7-2, 7-3, 7-11)",  # off the board
        "PLACE(6-3, 7-2, 7-3, 11-0)",
        "PLACE(6-3, 7-2, 7-3, 7-3)",  # a repeated cell
        "PLACE(6-3, 7-2, 7-3, 7--4)",
        "PLACE(6-3, 7-2, 7-3, 7-4",
        "PLACE(6-3, 7-2, 7-3, 7-4]",
        "PLACE[(6,3), (7,2), (7,3), (7,4)",
        "PLACE[(6,3), (7,2)), (7,3), (7,4)]",
        "MOVE(6-3, 7-2, 7-3, 7-4)",
        "PLACE(6-3, 7-2, 7-3, 7-4) extra",
        "PLACE(a-b, 7-2, 7-3, 7-4)",
        "PLACE(6-3; 7-2; 7-3; 7-4)",
        "PLACE(6-3, 7-2, 7-3, 7-٤)",  # a non-ASCII digit
    ],
)
def test_parse_rejects_bad_syntax(text: str) -> None:
    """Anything that is not four distinct on-board cells in PLACE(...) is a NotationError."""
    with pytest.raises(NotationError):
        Placement.parse(text)


def test_from_cells_rejects_bad_input() -> None:
    """from_cells wants exactly four distinct cells on the board."""
    for cells in ([0, 1, 2], [0, 1, 2, 3, 4], [0, 1, 2, 2], [0, 1, 2, 121], [(0, 0), (0, 11)]):
        with pytest.raises(NotationError):
            Placement.from_cells(cells)
    with pytest.raises(NotationError):
        Placement.from_cells([(0, 0), (0, 1), (0, 2), (-1, 3)])


def test_equality_is_by_cell_set_and_value_is_immutable() -> None:
    """Two placements with the same cells are equal, hash alike, pickle, and cannot change."""
    a = Placement.from_cells([(0, 0), (0, 1), (0, 2), (0, 3)])
    b = Placement.parse("PLACE(0-3, 0-2, 0-1, 0-0)")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Placement.parse("PLACE(0-1, 0-2, 0-3, 0-4)")
    assert a != "PLACE(0-0, 0-1, 0-2, 0-3)"
    assert pickle.loads(pickle.dumps(a)) == a
    with pytest.raises(AttributeError):
        a.mask = 5  # type: ignore[misc]
    assert eval(repr(a), {"Placement": Placement}) == a


def test_game_move_text_is_the_place_form() -> None:
    """The game's wire form is the same PLACE(...) notation."""
    game = Tetress()
    move = game.move_from_text("PLACE(7-4, 6-3, 7-2, 7-3)")
    assert game.move_to_text(move) == "PLACE(6-3, 7-2, 7-3, 7-4)"
    with pytest.raises(NotationError):
        game.move_from_text("PLACE(1-1)")


def test_repeated_parses_agree_and_bad_text_still_fails() -> None:
    """Parsing the same text again (served from the parse cache) gives an equal placement,
    and a bad text keeps raising however often it is tried."""
    text = "PLACE( 7-4 , 6-3, 7-2, 7-3 )"
    first = Placement.parse(text)
    second = Placement.parse(text)
    assert first == second
    assert str(second) == "PLACE(6-3, 7-2, 7-3, 7-4)"
    for _ in range(2):
        with pytest.raises(NotationError):
            Placement.parse("PLACE(6-3, 7-2, 7-3, 7-3)")
