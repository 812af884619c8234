"""ATT rules and the Game/State surface: removals, endings, errors, strings, undo, hashing."""

from __future__ import annotations

import pytest

from engine import load_game
from engine.att import AsymmetricTetrisTactics, AttState, Choice, Drop
from engine.errors import IllegalMoveError, NotationError, PositionError
from engine.outcome import Termination


def _board(rows_top_first: list[str], width: int = 10) -> str:
    """The board field of a position string: the picture rows at the bottom, the rest empty."""
    out = []
    for row in ["." * width] * (20 - len(rows_top_first)) + rows_top_first:
        text, empty = "", 0
        for ch in row:
            if ch == ".":
                empty += 1
                continue
            text += (str(empty) if empty else "") + "#"
            empty = 0
        out.append(text + (str(empty) if empty else ""))
    return "/".join(out)


def _state(
    picture: list[str], side: str = "C", turns: int = 0, cleared: int = 0, **params: int
) -> AttState:
    game = AsymmetricTetrisTactics(**params)
    return game.state_from_string(f"{_board(picture)} {side} {turns} {cleared}")


def _play(state: AttState, long_move: str) -> None:
    move = state.game.move_from_text(long_move)
    if isinstance(move, Drop) and state.pending is None:
        state.apply(Choice(move.piece))
    state.apply(move)


#: Five O pieces along the floor: two rows go and the well is empty again.
CLEAR_TWO_ROWS = ["Oa1", "Oc1", "Oe1", "Og1", "Ok1"]


def test_registered_as_att_with_its_parameters() -> None:
    """load_game("att", ...) builds the game with the seats and parameters stored in records."""
    game = load_game("att", max_placer_turns=30, max_rows=12)
    assert isinstance(game, AsymmetricTetrisTactics)
    assert game.seat_names == ("CHOOSER", "PLACER")
    assert dict(game.params) == {"max_placer_turns": 30, "max_rows": 12, "width": 10, "height": 20}
    assert game == AsymmetricTetrisTactics(max_placer_turns=30, max_rows=12)
    with pytest.raises(TypeError):
        load_game("att", speed=3)
    for bad in ({"width": 11}, {"height": 3}, {"max_rows": -1}):
        with pytest.raises(ValueError):
            AsymmetricTetrisTactics(**bad)


def test_chooser_moves_first_and_names_any_of_seven_pieces() -> None:
    """The first ply is the chooser's, with exactly the seven tetrominoes to choose from."""
    state = AsymmetricTetrisTactics().new_state()
    assert state.to_move == 0 and state.ply == 0
    assert sorted(str(m) for m in state.legal_moves) == list("IJLOSTZ")
    assert len(state.legal_moves) == 7 and Choice("T") in state.legal_moves
    state.apply(Choice("T"))
    assert state.to_move == 1 and state.pending == "T" and state.ply == 1
    assert Choice("T") not in state.legal_moves


def test_removed_rows_let_everything_above_fall_by_the_rows_removed_below() -> None:
    """Two full rows with a kept row between them: blocks fall 1 or 2 rows accordingly."""
    state = _state(
        [
            "..#.......",  # row 4: falls 2
            "#########.",  # row 3: completed by the I, removed
            ".#........",  # row 2: falls 1
            "#########.",  # row 1: completed, removed
        ],
        side="P:I",
        max_rows=0,
    )
    move = Drop("I", 0, 9, 1)
    assert state.san(move) == "Im (XX)"
    state.apply(move)
    assert state.grid()[-2:] == ["..#......#", ".#.......#"]
    assert state.rows_cleared == 2


def test_block_in_the_top_row_after_the_placer_turn_wins_for_the_chooser() -> None:
    """A piece resting in the top row ends the game at once, even on the N-th turn."""
    picture = ["..........", *[".####.####"] * 19]
    state = _state(picture, side="P:I", turns=4, max_placer_turns=5)
    assert Drop("I", 0, 5, 1) in state.legal_moves  # down the shaft in column f
    state.apply(Drop("I", 1, 3, 20))  # flat in the top row
    outcome = state.outcome()
    assert outcome is not None
    assert (outcome.termination, outcome.winner) == (Termination.TOP_ROW, 0)
    assert len(state.legal_moves) == 0


def test_four_rows_at_once_win_for_the_placer() -> None:
    """An I into a four-deep shaft removes four rows: the placer wins (four_rows)."""
    state = _state(["#########."] * 4, side="P:I", max_rows=0)
    state.apply(Drop("I", 0, 9, 1))
    outcome = state.outcome()
    assert outcome is not None
    assert (outcome.termination, outcome.winner) == (Termination.FOUR_ROWS, 1)
    assert state.rows_cleared == 4


def test_same_board_after_two_placer_turns_wins_for_the_placer() -> None:
    """Emptying the well and starting again repeats the board left by the first turn."""
    state = AsymmetricTetrisTactics(max_rows=0).new_state()
    for long_move in CLEAR_TWO_ROWS:
        _play(state, long_move)
        assert state.outcome() is None
    _play(state, "Oa1")  # the well after turn 1, again
    outcome = state.outcome()
    assert outcome is not None and outcome.termination is Termination.REPETITION
    assert outcome.winner == 1


def test_turn_and_row_quotas_end_the_game_for_the_placer() -> None:
    """N placer turns survived, and M rows removed in all, each win for the placer."""
    state = AsymmetricTetrisTactics(max_placer_turns=2, max_rows=0).new_state()
    _play(state, "Oa1")
    assert state.outcome() is None
    _play(state, "Oc1")
    outcome = state.outcome()
    assert outcome is not None and outcome.termination is Termination.TURNS_SURVIVED
    rows = _state(["#########."], side="P:I", max_rows=1)
    rows.apply(Drop("I", 0, 9, 1))
    outcome = rows.outcome()
    assert outcome is not None and outcome.termination is Termination.ROWS_CLEARED
    assert outcome.winner == 1


@pytest.mark.parametrize(
    ("turns", "rows", "ending"),
    [
        (0, 0, None),
        (5, 0, Termination.TURNS_SURVIVED),
        (0, 2, Termination.ROWS_CLEARED),
        (6, 3, None),
        (5, 2, Termination.ROWS_CLEARED),
    ],
)
def test_quotas_reached_exactly_and_zero_switches_them_off(
    turns: int, rows: int, ending: Termination | None
) -> None:
    """Five placer turns removing two rows end the game only if N <= 5 or M <= 2 (0 = off)."""
    state = AsymmetricTetrisTactics(max_placer_turns=turns, max_rows=rows).new_state()
    for long_move in CLEAR_TWO_ROWS:
        assert state.outcome() is None
        _play(state, long_move)
    outcome = state.outcome()
    assert (outcome.termination if outcome else None) == ending
    assert state.rows_cleared == 2 and state.placer_turns == 5


@pytest.mark.parametrize(
    ("side", "move", "rule"),
    [
        ("C", Drop("T", 0, 0, 1), "not_your_turn"),
        ("P:T", Choice("T"), "not_your_turn"),
        ("P:T", Drop("O", 0, 0, 1), "wrong_piece"),
        ("P:T", Drop("T", 2, 0, 5), "not_reachable"),
        ("P:T", Drop("T", 2, 0, 1), "occupied"),
        ("P:T", Drop("T", 2, 8, 2), "off_board"),
        ("P:T", Drop("T", 0, 4, 1), "off_board"),
        ("P:T", Drop("T", 1, 0, 20), "off_board"),
    ],
)
def test_illegal_moves_say_which_rule(side: str, move: object, rule: str) -> None:
    """check/apply raise IllegalMoveError with a stable rule code and leave the state as is."""
    state = _state(["##........"], side=side)
    before = state.to_string()
    with pytest.raises(IllegalMoveError) as caught:
        state.apply(move)  # type: ignore[arg-type]
    assert caught.value.rule == rule
    assert state.to_string() == before


def test_no_move_after_the_game_is_over() -> None:
    """Once over, there are no legal moves and any move is game_over."""
    state = _state(["#########."] * 4, side="P:I")
    state.apply(Drop("I", 0, 9, 1))
    assert len(state.legal_moves) == 0 and list(state.legal_moves) == []
    with pytest.raises(IllegalMoveError) as caught:
        state.apply(Choice("I"))
    assert caught.value.rule == "game_over"


def test_position_string_round_trips_with_side_counters_and_ending() -> None:
    """to_string holds the well, side, pending piece, counters and ending; it reads back."""
    state = AsymmetricTetrisTactics().new_state()
    assert state.to_string() == " ".join(["/".join(["10"] * 20), "C", "0", "0"])
    _play(state, "T1a2")
    state.apply(Choice("S"))
    text = state.to_string()
    assert text.endswith("/1#8/##8/1#8 P:S 1 0")
    again = state.game.state_from_string(text)
    assert again.to_string() == text and again.zobrist == state.zobrist
    assert again.ply == state.ply == 3
    over = _state(["#########."] * 4, side="P:I")
    over.apply(Drop("I", 0, 9, 1))
    assert over.to_string().endswith(" C 1 4 four_rows")
    back = over.game.state_from_string(over.to_string())
    assert back.outcome() == over.outcome()


@pytest.mark.parametrize(
    "text",
    [
        "",
        "10/10 C 0 0",
        "/".join(["10"] * 20) + " X 0 0",
        "/".join(["10"] * 20) + " P:Q 0 0",
        "/".join(["10"] * 20) + " C a 0",
        "/".join(["10"] * 19 + ["9"]) + " C 0 0",
        "/".join(["10"] * 19 + ["#x8"]) + " C 0 0",
        "/".join(["10"] * 20) + " C 0 0 no_legal_move",
        "/".join(["10"] * 20) + " P:O 0 0 placer_has_no_entry",
    ],
)
def test_bad_position_strings_raise_position_error(text: str) -> None:
    """Malformed or inconsistent position strings are rejected with PositionError."""
    with pytest.raises(PositionError):
        AsymmetricTetrisTactics().state_from_string(text)


def test_undo_restores_position_hash_outcome_and_repetition_count() -> None:
    """Undoing every move brings back each earlier string, hash and outcome exactly."""
    state = AsymmetricTetrisTactics(max_rows=0).new_state()
    seen = []
    for long_move in [*CLEAR_TWO_ROWS, "Oa1"]:
        for move in ([] if state.pending else [Choice(long_move[0])]) + [
            state.game.move_from_text(long_move)
        ]:
            seen.append((state.to_string(), state.zobrist, state.outcome(), state.ply))
            state.apply(move)
    assert state.outcome() is not None
    while seen:
        state.undo()
        assert (state.to_string(), state.zobrist, state.outcome(), state.ply) == seen.pop()
    with pytest.raises(IndexError):
        state.undo()
    # The repetition count went back too: replaying the first empty-well clear is no repeat.
    _play(state, "Oa1")
    assert state.outcome() is None


def test_copy_is_independent() -> None:
    """A copy shares no history or board with its original."""
    state = AsymmetricTetrisTactics().new_state()
    _play(state, "Oa1")
    twin = state.copy()
    _play(twin, "Oc1")
    assert len(state.history) == 2 and len(twin.history) == 4
    assert state.to_string() != twin.to_string()
    twin.undo()
    twin.undo()
    assert twin.to_string() == state.to_string() and twin.zobrist == state.zobrist


def test_zobrist_tells_side_and_piece_and_matches_transpositions() -> None:
    """Same well reached two ways hashes the same; another side or piece hashes differently."""
    a = AsymmetricTetrisTactics().new_state()
    b = AsymmetricTetrisTactics().new_state()
    for text in ["Oa1", "Oc1"]:
        _play(a, text)
    for text in ["Oc1", "Oa1"]:
        _play(b, text)
    assert a.zobrist == b.zobrist
    hashes = {a.zobrist}
    for piece in "IJLOSTZ":
        a.apply(Choice(piece))
        hashes.add(a.zobrist)
        a.undo()
    assert len(hashes) == 8
    assert all(0 <= h < 2**64 for h in hashes)


def test_long_move_text_is_position_independent_and_strict() -> None:
    """Chooser moves are a letter; drops are the triad with its row; anything else is rejected."""
    game = AsymmetricTetrisTactics()
    assert game.move_from_text("T") == Choice("T")
    assert game.move_from_text("T1c5") == Drop("T", 1, 2, 5)
    assert game.move_to_text(Drop("T", 1, 2, 5)) == "T1c5"
    assert game.move_to_text(Drop("I", 2, 0, 1)) == "Ia1"
    for bad in ["T1c", "Tc5 (X)", "Q", "T1z5", "Tc21", ""]:
        with pytest.raises(NotationError):
            game.move_from_text(bad)


def test_cells_and_drop_at_are_inverse() -> None:
    """The cells of every drop on the empty well map back to the same drop."""
    state = AsymmetricTetrisTactics().new_state()
    game = state.game
    for piece in "IJLOSTZ":
        state.apply(Choice(piece))
        for move in state.legal_moves:
            assert isinstance(move, Drop)
            assert game.drop_at(piece, game.cells(move)) == move
        state.undo()
    with pytest.raises(ValueError):
        game.cells(Drop("T", 0, 0, 1))  # the stem would be below the floor
    assert game.cells(Drop("T", 2, 0, 1)) == (181, 190, 191, 192)
    with pytest.raises(ValueError):
        game.drop_at("T", [0, 1, 2, 3])


def test_grid_and_render_show_the_well_top_row_first() -> None:
    """grid() is top first with '#' and '.'; render adds row numbers, column letters, status."""
    state = _state(["#........."], side="P:T")
    grid = state.grid()
    assert len(grid) == 20 and grid[-1] == "#........." and grid[0] == ".........."
    text = state.render()
    assert " 1 |#.........|" in text and "abcdefghkm" in text and "PLACER to place T" in text
    assert "\x1b[" in state.render(color=True) and "\x1b[" not in text


def test_legal_move_view_counts_without_building_and_matches_iteration() -> None:
    """len() and `in` agree with iteration; foreign objects are never contained."""
    state = _state(["#.#.##..#.", "##.####.##"], side="P:L")
    moves = list(state.legal_moves)
    assert len(moves) == len(set(moves)) == len(state.legal_moves)
    assert all(m in state.legal_moves for m in moves)
    assert "L" not in state.legal_moves and None not in state.legal_moves
