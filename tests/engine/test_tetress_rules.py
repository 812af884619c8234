"""Unit tests for each Tetress rule, including the rules text's worked examples (Figs 4-7)."""

from __future__ import annotations

import pytest

from engine.errors import IllegalMoveError, PositionError
from engine.outcome import Outcome, Termination
from engine.registry import register_game
from engine.tetress import (
    NUM_PLACEMENTS,
    PLACEMENTS,
    SHAPES,
    Placement,
    Tetress,
    TetressState,
    placement_of,
    shape_of,
)

RED, BLUE = 0, 1
FIG4_RED = "PLACE[(6,3), (7,2), (7,3), (7,4)]"
FIG4_BLUE = "PLACE[(2,7), (2,8), (3,7), (3,8)]"
FIG5 = (
    "PLACE[(6,4), (6,5), (7,5), (7,6)]",
    "PLACE[(8,1), (8,2), (9,2), (9,3)]",
    "PLACE[(6,10), (6,0), (7,0), (7,1)]",
)


def position(rows: list[str], ply: int) -> str:
    """A position string from 11 rows (spaces allowed for readability) and the ply."""
    cleaned = [row.replace(" ", "") for row in rows]
    return f"{'/'.join(cleaned)} {'rb'[ply % 2]} {ply}"


def play(state: TetressState, *moves: str) -> TetressState:
    for text in moves:
        state.apply(Placement.parse(text))
    return state


def rule_of(state: TetressState, text: str) -> IllegalMoveError:
    with pytest.raises(IllegalMoveError) as info:
        state.apply(Placement.parse(text))
    return info.value


@pytest.fixture
def game() -> Tetress:
    return Tetress()


def test_game_metadata() -> None:
    """The game is registered as ``tetress`` with seats RED/BLUE and a 150-action limit."""
    game = Tetress()
    assert game.name == "tetress" and game.title == "Tetress"
    assert game.seat_names == ("RED", "BLUE")
    assert dict(game.params) == {"turn_limit": 150}
    assert dict(Tetress(turn_limit=20).params) == {"turn_limit": 20}
    assert Tetress() == Tetress() and Tetress() != Tetress(turn_limit=20)
    register_game("tetress", Tetress)  # already registered with this factory: no error


def test_shapes_match_course_piece_types() -> None:
    """The 19 fixed tetrominoes carry the course's PieceType names, in its order."""
    names = [s.name for s in SHAPES]
    assert names == [
        "O", "I-H", "I-V", "T-U", "T-R", "T-D", "T-L", "L-U", "L-R", "L-D",
        "L-L", "J-U", "J-R", "J-D", "J-L", "S-H", "S-V", "Z-H", "Z-V",
    ]  # fmt: skip
    assert SHAPES[3].offsets == ((-1, -1), (-1, 0), (-1, 1), (0, 0))
    assert len({s.cells for s in SHAPES}) == 19


def test_all_placements_are_distinct_tetrominoes() -> None:
    """The 2299 placements (19 shapes x 121 anchors) are distinct 4-cell sets."""
    assert NUM_PLACEMENTS == 2299
    assert len(set(PLACEMENTS)) == 2299
    assert all(shape_of(p) is not None for p in PLACEMENTS)


def test_shape_of_is_wrap_aware() -> None:
    """A piece that wraps round the edge is still recognised (Fig 5c is a Z)."""
    assert shape_of(Placement.parse(FIG5[2])) == "Z-H"
    assert shape_of(Placement.parse("PLACE(10-0, 0-0, 1-0, 2-0)")) == "I-V"
    assert shape_of(Placement.parse("PLACE(10-10, 10-0, 0-10, 0-0)")) == "O"
    assert shape_of(Placement.parse("PLACE(0-0, 0-1, 0-2, 1-4)")) is None
    assert shape_of(Placement.parse(FIG4_RED)) == "T-D"
    assert placement_of("T-D", (6, 2)) == Placement.parse(FIG4_RED)


def test_new_state_is_empty_red_to_move(game: Tetress) -> None:
    """The game starts on an empty board, Red to move, every placement legal."""
    state = game.new_state()
    assert state.to_move == RED and state.ply == 0
    assert state.token_counts == (0, 0)
    assert len(state.legal_moves) == 2299
    assert state.outcome() is None
    assert state.to_string() == "/".join(["." * 11] * 11) + " r 0"


def test_figure_4_openings_need_no_adjacency(game: Tetress) -> None:
    """Fig 4: both players' first actions are legal anywhere (the adjacency exemption)."""
    state = game.new_state()
    play(state, FIG4_RED)
    assert state.to_move == BLUE
    assert Placement.parse(FIG4_BLUE) in state.legal_moves
    play(state, FIG4_BLUE)
    assert state.grid()[2] == ".......bb.."
    assert state.grid()[6] == "...r......."
    assert state.grid()[7] == "..rrr......"
    assert state.token_counts == (4, 4)


def test_figure_5_z_placements_are_legal(game: Tetress) -> None:
    """Fig 5: the three Z placements touching Red's tokens are legal for Red next."""
    state = play(game.new_state(), FIG4_RED, FIG4_BLUE)
    for text in FIG5:
        move = Placement.parse(text)
        assert move in state.legal_moves
        state.check(move)
        assert shape_of(move) == "Z-H"


def test_adjacency_exemption_is_for_first_action_only(game: Tetress) -> None:
    """From each player's second action on, a placement must touch an own token."""
    state = play(game.new_state(), FIG4_RED, FIG4_BLUE)
    error = rule_of(state, "PLACE(0-0, 0-1, 0-2, 0-3)")
    assert error.rule == "not_adjacent"
    assert "RED" in error.detail
    # Touching only the opponent's tokens does not count.
    assert rule_of(state, "PLACE(1-7, 1-8, 1-9, 1-10)").rule == "not_adjacent"
    play(state, FIG5[0])
    assert rule_of(state, "PLACE(9-9, 9-10, 10-9, 10-10)").rule == "not_adjacent"
    # Adjacency through the wrap: Blue's (2,7) touches (1,7), reached from row 1.
    play(state, "PLACE(1-7, 1-8, 1-9, 1-10)")
    assert state.token_counts == (8, 8)


def test_adjacency_wraps_round_the_board(game: Tetress) -> None:
    """A token on row 10 is next to row 0, and column 0 next to column 10."""
    state = play(game.new_state(), "PLACE(10-3, 10-4, 10-5, 10-6)", "PLACE(5-5, 5-6, 6-5, 6-6)")
    assert Placement.parse("PLACE(0-3, 0-4, 1-3, 1-4)") in state.legal_moves
    state = play(game.new_state(), "PLACE(3-10, 4-10, 5-10, 6-10)", "PLACE(0-5, 0-6, 1-5, 1-6)")
    assert Placement.parse("PLACE(4-0, 4-1, 5-0, 5-1)") in state.legal_moves
    # Diagonal contact is not adjacency.
    assert Placement.parse("PLACE(7-0, 7-1, 8-0, 8-1)") not in state.legal_moves


def test_occupied_cells_are_refused_naming_the_cell(game: Tetress) -> None:
    """A placement over any token is illegal; the error names the first occupied cell."""
    state = play(game.new_state(), FIG4_RED)
    error = rule_of(state, "PLACE(7-3, 8-3, 9-3, 10-3)")
    assert error.rule == "occupied"
    assert error.detail == "cell 7-3 is occupied"
    assert error.move_text == "PLACE(7-3, 8-3, 9-3, 10-3)"
    assert state.ply == 1  # the failed apply left the state alone


def test_non_tetrominoes_are_refused(game: Tetress) -> None:
    """Four cells that are not one of the 19 fixed tetrominoes break condition 1."""
    state = game.new_state()
    for text in (
        "PLACE(0-0, 0-1, 0-2, 1-4)",  # disconnected
        "PLACE(0-0, 1-1, 2-2, 3-3)",  # diagonal only
        "PLACE(0-0, 0-1, 0-2, 0-4)",  # a gap
        "PLACE(0-9, 0-10, 0-0, 0-2)",  # a gap across the wrap
    ):
        assert rule_of(state, text).rule == "not_tetromino", text
        assert Placement.parse(text) not in state.legal_moves


def test_figure_6a_a_full_row_is_removed(game: Tetress) -> None:
    """Fig 6a-like: completing a row removes every token on it, of both colours."""
    rows = ["..........."] * 11
    rows[4] = "....r......"
    rows[5] = "bbb.rrr.bbb"
    rows[6] = "....b......"
    state = game.state_from_string(position(rows, 8))
    play(state, "PLACE(4-6, 4-7, 4-8, 5-7)")  # fills (5,7) but (5,3) is still empty
    assert state.grid()[5] == "bbb.rrrrbbb"
    rows[5] = "bbbbrrr.bbb"
    state = game.state_from_string(position(rows, 8))
    play(state, "PLACE(4-6, 4-7, 4-8, 5-7)")
    assert state.grid()[5] == "..........."
    assert state.grid()[4] == "....r.rrr.."
    assert state.token_counts == (4, 1)


def test_figure_6b_one_row_and_two_columns_at_once(game: Tetress) -> None:
    """Fig 6b-like: a row and two columns completed by one action are all removed together,
    the placed piece's own cells included."""
    rows = ["...rb......"] * 11  # columns 3 and 4 hold tokens on every row but 5 and 6
    rows[5] = "bbr..rbbrbr"  # row 5 misses (5,3) and (5,4)
    rows[6] = "......b...."
    state = game.state_from_string(position(rows, 20))
    before = state.token_counts
    # The O at (5,3)-(6,4) fills row 5 and columns 3 and 4 (they miss (5,x) and (6,x)).
    play(state, "PLACE(5-3, 5-4, 6-3, 6-4)")
    grid = state.grid()
    assert grid[5] == "..........."
    assert all(row[3] == "." and row[4] == "." for row in grid)
    assert grid[6] == "......b...."
    removed = before[0] + before[1] + 4 - sum(state.token_counts)
    assert removed == 11 + 10 + 10  # the two crossing cells go once
    assert state.token_counts == (0, 1)


def test_removal_can_take_a_whole_colour_and_that_player_then_loses(game: Tetress) -> None:
    """A player whose tokens are all removed cannot touch an own token and loses on move."""
    rows = ["..........."] * 11
    rows[4] = "....r......"
    rows[5] = "bbbbrrr...."
    state = game.state_from_string(position(rows, 4))
    play(state, "PLACE(5-7, 5-8, 5-9, 5-10)")
    assert state.token_counts == (1, 0)
    assert state.to_move == BLUE
    assert len(state.legal_moves) == 0
    assert list(state.legal_moves) == []
    assert state.outcome() == Outcome(Termination.NO_LEGAL_MOVE, RED)
    error = rule_of(state, "PLACE(0-0, 0-1, 0-2, 0-3)")
    assert error.rule == "game_over"


FIG7_ROWS = [
    # Empty cells: the 2x2 block at (4,3)-(5,4) and the isolated diagonal (r, r+2).
    "bb.bbbbbbbb",
    "bbb.bbbbbbb",
    "bbbb.bbbbbb",
    "bbbbb.bbbbb",
    "bbb..b.bbbb",
    "bbb..bb.bbb",
    "bbbbbbbb.bb",
    "bbbbbbbbb.b",
    "rrrrrrrrrr.",
    ".rrrrrrrrrr",
    "r.rrrrrrrrr",
]


def test_figure_7_blue_blocks_red_and_wins(game: Tetress) -> None:
    """Fig 7-like: Blue fills the last 2x2 hole; Red then has no legal placement and loses."""
    state = game.state_from_string(position(FIG7_ROWS, 41))
    assert state.outcome() is None
    assert [str(m) for m in state.legal_moves] == ["PLACE(4-3, 4-4, 5-3, 5-4)"]
    play(state, "PLACE[(4, 3), (4, 4), (5, 3), (5, 4)]")
    assert state.to_move == RED
    assert state.token_counts[0] > 0  # Red still has tokens: it is blocked, not wiped out
    assert len(state.legal_moves) == 0
    assert state.outcome() == Outcome(Termination.NO_LEGAL_MOVE, BLUE)
    assert state.is_over()


def test_turn_limit_more_tokens_wins_and_equal_draws() -> None:
    """After turn_limit actions the game ends: more tokens wins, equal counts draw."""
    game = Tetress(turn_limit=4)
    state = play(game.new_state(), FIG4_RED, FIG4_BLUE, FIG5[0], "PLACE(1-7, 1-8, 1-9, 1-10)")
    assert state.outcome() == Outcome(Termination.TURN_LIMIT, None)
    assert len(state.legal_moves) == 0
    assert rule_of(state, FIG5[1]).rule == "game_over"
    rows = ["..........."] * 11
    rows[0] = "rrrr......."
    rows[5] = "bbbbbbbb..."
    state = Tetress().state_from_string(position(rows, 149))
    assert state.outcome() is None
    play(state, "PLACE(4-0, 4-1, 4-2, 4-3)")
    assert state.outcome() == Outcome(Termination.TURN_LIMIT, BLUE)
    state = Tetress().state_from_string(position(rows, 150))
    assert state.outcome() == Outcome(Termination.TURN_LIMIT, BLUE)


def test_turn_limit_takes_precedence_over_a_blocked_mover() -> None:
    """At the limit the game ends on tokens even if the mover could not have moved."""
    state = Tetress(turn_limit=42).state_from_string(position(FIG7_ROWS, 42))
    outcome = state.outcome()
    assert outcome is not None and outcome.termination == Termination.TURN_LIMIT
    assert outcome.winner == BLUE


def test_position_string_is_validated(game: Tetress) -> None:
    """Malformed or impossible position strings raise PositionError."""
    empty = "/".join(["." * 11] * 11)
    for text in (
        "",
        f"{empty} r",
        f"{empty} x 0",
        f"{empty} b 0",  # Red moves at even plies
        f"{empty} r -2",
        f"{empty} r 152",  # past the limit
        empty.replace(".", "x", 1) + " r 0",
        empty[:-1] + " r 0",
        "/".join(["r" * 11] + ["." * 11] * 10) + " r 2",  # a full row
        "/".join(["r" + "." * 10] * 11) + " r 2",  # a full column
    ):
        with pytest.raises(PositionError):
            game.state_from_string(text)


def test_undo_restores_removed_lines(game: Tetress) -> None:
    """Undo after a line removal brings the removed tokens back."""
    rows = ["..........."] * 11
    rows[4] = "....r......"
    rows[5] = "bbbbrrr...."
    text = position(rows, 4)
    state = game.state_from_string(text)
    move = Placement.parse("PLACE(5-7, 5-8, 5-9, 5-10)")
    state.apply(move)
    assert state.undo() == move
    assert state.to_string() == text
    assert state.zobrist == game.state_from_string(text).zobrist
    with pytest.raises(IndexError):
        state.undo()


def test_copy_is_independent(game: Tetress) -> None:
    """A copy shares nothing mutable with its original."""
    state = play(game.new_state(), FIG4_RED)
    clone = state.copy()
    play(clone, FIG4_BLUE)
    assert state.ply == 1 and clone.ply == 2
    assert len(state.history) == 1 and len(clone.history) == 2
    assert clone.undo() == Placement.parse(FIG4_BLUE)
    assert clone.to_string() == state.to_string()


def test_parse_san_checks_legality_and_returns_canonical(game: Tetress) -> None:
    """parse_san parses any cell order, checks the rules and returns the move."""
    state = game.new_state()
    move = state.parse_san("PLACE(7-4, 6-3, 7-2, 7-3)")
    assert state.san(move) == "PLACE(6-3, 7-2, 7-3, 7-4)"
    state.apply(move)
    with pytest.raises(IllegalMoveError):
        state.parse_san("PLACE(7-4, 6-3, 7-2, 7-3)")


def test_render_and_describe(game: Tetress) -> None:
    """render() draws the grid (ANSI colours on request) and the status line."""
    state = play(game.new_state(), FIG4_RED)
    plain = state.render()
    assert "BLUE to move" in plain and "\x1b[" not in plain
    assert " r " in plain.splitlines()[7]
    assert "\x1b[" in state.render(color=True)
    assert state.describe()["position"] == state.to_string()
    assert str(state) == plain


def test_registry_loads_tetress_by_name() -> None:
    """load_game("tetress", ...) builds the Tetress game with its parameters."""
    from engine.registry import game_names, load_game

    assert "tetress" in game_names()
    game = load_game("tetress", turn_limit=30)
    assert isinstance(game, Tetress) and game.turn_limit == 30
    with pytest.raises(TypeError):
        load_game("tetress", turns=3)


def test_state_constructor_checks_masks(game: Tetress) -> None:
    """TetressState(game, red, blue, ply) refuses overlapping or off-board cell masks."""
    assert TetressState(game, 1, 2, 3).to_string().startswith("rb.")
    for red, blue, ply in ((1, 1, 2), (1 << 121, 0, 2), (0, 0, -1), (-1, 0, 2)):
        with pytest.raises(PositionError):
            TetressState(game, red, blue, ply)
