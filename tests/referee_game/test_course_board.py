"""The course Board, backed by the engine: play, take back, lines, the end, and the
conformance games replayed through it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from referee.game import (
    Board,
    CellState,
    Coord,
    IllegalActionException,
    PieceType,
    PlaceAction,
    PlayerColor,
)

_DIR = Path(__file__).resolve().parents[1] / "data" / "conformance" / "tetress"
CONFORMANCE_DIR = Path(os.environ.get("TETRESS_CONFORMANCE_DIR", str(_DIR)))


def place(*cells: tuple[int, int]) -> PlaceAction:
    c1, c2, c3, c4 = (Coord(r, c) for r, c in cells)
    return PlaceAction(c1, c2, c3, c4)


def test_empty_board() -> None:
    """Board() is empty with Red to move, 121 cells in _state, nothing over."""
    board = Board()
    assert board.turn_color is PlayerColor.RED and board.turn_count == 0
    assert len(board._state) == 121
    assert all(cell.player is None for cell in board._state.values())
    assert board[Coord(5, 5)] == CellState() and board[Coord(5, 5)].player is None
    assert not board.game_over and board.winner_color is None
    assert not board.turn_limit_reached


def test_apply_and_undo() -> None:
    """apply_action places tokens, passes the turn and returns the change; undo reverts it."""
    board = Board()
    action = place((6, 3), (7, 2), (7, 3), (7, 4))
    record = board.apply_action(action)
    assert record.action == action
    assert {m.cell for m in record.cell_mutations} == action.coords
    assert all(m.next.player is PlayerColor.RED for m in record.cell_mutations)
    assert board[Coord(7, 2)].player is PlayerColor.RED
    assert board.turn_color is PlayerColor.BLUE and board.turn_count == 1
    assert board._turn_color is PlayerColor.BLUE
    board.apply_action(place((2, 7), (2, 8), (3, 7), (3, 8)))
    assert board[Coord(3, 8)].player is PlayerColor.BLUE and board.turn_count == 2
    board.undo_action()
    assert board[Coord(3, 8)].player is None and board.turn_color is PlayerColor.BLUE
    board.undo_action()
    assert all(cell.player is None for cell in board._state.values())
    assert board.turn_count == 0
    with pytest.raises(IndexError):
        board.undo_action()


@pytest.mark.parametrize(
    ("setup", "action", "words"),
    [
        ([], place((0, 0), (0, 1), (0, 2), (1, 5)), "tetromino"),
        ([place((6, 3), (7, 2), (7, 3), (7, 4))], place((6, 3), (6, 4), (5, 3), (5, 4)), "6-3"),
        (
            [place((6, 3), (7, 2), (7, 3), (7, 4)), place((2, 7), (2, 8), (3, 7), (3, 8))],
            place((0, 0), (0, 1), (1, 0), (1, 1)),
            "next to",
        ),
    ],
)
def test_illegal_actions_raise_with_a_reason(
    setup: list[PlaceAction], action: PlaceAction, words: str
) -> None:
    """Non-tetromino, occupied and non-adjacent actions raise IllegalActionException, saying
    why, and leave the board as it was."""
    board = Board()
    for earlier in setup:
        board.apply_action(earlier)
    before = dict(board._state)
    with pytest.raises(IllegalActionException) as info:
        board.apply_action(action)
    assert words in str(info.value)
    assert info.value.player is board.turn_color
    assert board._state == before and board.turn_count == len(setup)


def test_non_action_and_repeated_cells_are_illegal() -> None:
    """Anything that is not a PlaceAction, or repeats a cell, is an illegal action."""
    board = Board()
    with pytest.raises(IllegalActionException):
        board.apply_action(None)  # type: ignore[arg-type]
    with pytest.raises(IllegalActionException):
        board.apply_action(place((1, 1), (1, 1), (1, 2), (1, 3)))


def test_line_removal_and_undo() -> None:
    """Completing a row removes it (both colours' tokens); undo puts every token back."""
    row = {Coord(4, c): CellState(PlayerColor.BLUE) for c in range(7)}
    row[Coord(5, 7)] = CellState(PlayerColor.RED)
    board = Board(initial_state=row)
    assert board.turn_color is PlayerColor.RED
    record = board.apply_action(place((4, 7), (4, 8), (4, 9), (4, 10)))
    assert all(board[Coord(4, c)].player is None for c in range(11))
    assert board[Coord(5, 7)].player is PlayerColor.RED
    assert len(record.cell_mutations) == 11
    board.undo_action()
    assert board._state == Board(initial_state=row)._state


def test_initial_player_and_render() -> None:
    """initial_player picks who moves; render shows r/b/. rows, top row first."""
    board = Board(
        initial_state={Coord(0, 0): CellState(PlayerColor.RED)}, initial_player=PlayerColor.BLUE
    )
    assert board.turn_color is PlayerColor.BLUE
    text = board.render()
    assert text.splitlines()[0].split()[0] == "r" and len(text.splitlines()) == 11
    assert "\x1b[" in board.render(use_color=True)
    assert board.render(use_unicode=True) != text


def test_game_over_when_blocked() -> None:
    """A player with no legal placement ends the game; the opponent is the winner."""
    cells = {Coord(r, c): CellState(PlayerColor.BLUE) for r in range(11) for c in range(11)}
    for r, c in [(0, 0), (0, 1), (1, 0), (1, 1)]:
        cells[Coord(r, c)] = CellState(PlayerColor.RED)
    for r, c in [(5, 5), (5, 6), (5, 7)]:  # a gap too small for any tetromino
        del cells[Coord(r, c)]
    blocked = Board(initial_state=cells)
    assert blocked.game_over and blocked.winner_color is PlayerColor.BLUE


def _replay_cases(limit: int) -> list[dict[str, object]]:
    files = sorted(CONFORMANCE_DIR.glob("*.jsonl"))
    assert files, f"no *.jsonl games in {CONFORMANCE_DIR}"
    with files[0].open(encoding="utf-8") as handle:
        return [json.loads(line) for _, line in zip(range(limit), handle, strict=False)]


def test_conformance_games_through_the_board() -> None:
    """The course Board agrees with every position, end and winner of reference games."""
    chars = {None: ".", PlayerColor.RED: "r", PlayerColor.BLUE: "b"}
    for record in _replay_cases(25):
        board = Board()
        plies = record["plies"]
        assert isinstance(plies, list)
        for ply in plies:
            assert not board.game_over
            assert str(board.turn_color) == ply["mover"]
            cells = [Coord(*divmod(i, 11)) for i in ply["move"]]
            board.apply_action(PlaceAction(*cells))
            rows = ["".join(chars[board[Coord(r, c)].player] for c in range(11)) for r in range(11)]
            assert "/".join(rows) == ply["board_after"]
        assert board.game_over
        assert board.turn_limit_reached == (record["reason"] == "turn_limit")
        winner = board.winner_color
        assert (str(winner) if winner else "DRAW") == record["winner"]
        assert board.turn_count == record["turns"]


def test_deepcopy_and_pickle_make_independent_boards() -> None:
    """copy.deepcopy and pickle (which bots use for search) give boards that evolve apart."""
    import copy
    import pickle

    board = Board()
    board.apply_action(place((6, 3), (7, 2), (7, 3), (7, 4)))
    for twin in (copy.deepcopy(board), pickle.loads(pickle.dumps(board))):
        twin.apply_action(place((0, 0), (0, 1), (0, 2), (0, 3)))
        assert twin.turn_count == 2 and board.turn_count == 1
        assert twin[Coord(0, 0)].player is PlayerColor.BLUE
        assert board[Coord(0, 0)].player is None
        twin.undo_action()
        assert twin._state == board._state


def test_blue_first_on_an_empty_board_exempts_both_first_actions() -> None:
    """Board(initial_player=BLUE): BLUE's and RED's first placements may go anywhere."""
    board = Board(initial_player=PlayerColor.BLUE)
    assert board.turn_color is PlayerColor.BLUE
    board.apply_action(place((0, 0), (0, 1), (1, 0), (1, 1)))
    assert not board.game_over and board.turn_color is PlayerColor.RED
    board.apply_action(place((5, 5), (5, 6), (6, 5), (6, 6)))
    assert board[Coord(0, 0)].player is PlayerColor.BLUE
    assert board[Coord(5, 5)].player is PlayerColor.RED
    assert board._player_token_count(PlayerColor.BLUE) == 4
    with pytest.raises(IllegalActionException, match="next to a BLUE token"):
        board.apply_action(place((8, 8), (8, 9), (9, 8), (9, 9)))
    board.undo_action()
    assert board.turn_color is PlayerColor.RED and board.turn_count == 1


def test_first_two_actions_exempt_on_a_board_with_tokens() -> None:
    """As in the course, the exemption is keyed on turn_count < 2 alone."""
    board = Board(initial_state={Coord(0, 0): CellState(PlayerColor.RED)})
    board.apply_action(place((5, 5), (5, 6), (6, 5), (6, 6)))
    assert board.turn_color is PlayerColor.BLUE


def test_cell_empty_and_cell_occupied() -> None:
    """_cell_empty / _cell_occupied test one cell."""
    board = Board()
    board.apply_action(place((0, 0), (0, 1), (1, 0), (1, 1)))
    assert board._cell_occupied(Coord(0, 0)) and not board._cell_empty(Coord(0, 0))
    assert board._cell_empty(Coord(2, 2)) and not board._cell_occupied(Coord(2, 2))


def test_occupied_coords() -> None:
    """_occupied_coords is the set of every cell holding a token."""
    board = Board()
    assert board._occupied_coords() == set()
    board.apply_action(place((0, 0), (0, 1), (1, 0), (1, 1)))
    assert board._occupied_coords() == {Coord(0, 0), Coord(0, 1), Coord(1, 0), Coord(1, 1)}


def test_player_token_count() -> None:
    """_player_token_count counts one colour's tokens."""
    board = Board()
    board.apply_action(place((0, 0), (0, 1), (1, 0), (1, 1)))
    assert board._player_token_count(PlayerColor.RED) == 4
    assert board._player_token_count(PlayerColor.BLUE) == 0


def test_has_neighbour_wraps() -> None:
    """_has_neighbour looks at the four torus neighbours for the given colour."""
    board = Board()
    board.apply_action(place((0, 0), (0, 1), (1, 0), (1, 1)))
    assert board._has_neighbour(Coord(10, 0), PlayerColor.RED)
    assert board._has_neighbour(Coord(0, 2), PlayerColor.RED)
    assert not board._has_neighbour(Coord(2, 2), PlayerColor.RED)
    assert not board._has_neighbour(Coord(0, 2), PlayerColor.BLUE)


def test_parse_place_action_validates_without_applying() -> None:
    """_parse_place_action returns the Piece or raises, and never changes the board."""
    board = Board()
    piece = board._parse_place_action(place((0, 0), (0, 1), (1, 0), (1, 1)))
    assert piece.type is PieceType.O and board.turn_count == 0
    with pytest.raises(IllegalActionException, match="not a PlaceAction"):
        board._parse_place_action("PLACE(0-0)")  # type: ignore[arg-type]
    with pytest.raises(IllegalActionException, match="tetromino"):
        board._parse_place_action(place((0, 0), (0, 2), (0, 4), (0, 6)))
    board.apply_action(place((0, 0), (0, 1), (1, 0), (1, 1)))
    with pytest.raises(IllegalActionException, match="occupied"):
        board._parse_place_action(place((0, 0), (0, 1), (1, 0), (1, 1)))
    board.apply_action(place((5, 5), (5, 6), (6, 5), (6, 6)))
    with pytest.raises(IllegalActionException, match="next to a RED token"):
        board._parse_place_action(place((8, 8), (8, 9), (9, 8), (9, 9)))
    assert board._parse_place_action(place((0, 2), (0, 3), (0, 4), (0, 5))).type is (
        PieceType.IHorizontal
    )
    assert board.turn_count == 2
