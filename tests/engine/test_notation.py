"""Tetris-System notation: syntax, set-ups, resolution in a position, and the paper's sample."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.att import AsymmetricTetrisTactics, AttState, Choice, Drop
from engine.att import notation as tsn
from engine.att.pieces import shape
from engine.att.search import middle_columns
from engine.errors import AmbiguousMoveError, IllegalMoveError, NotationError, PositionError


@pytest.mark.parametrize(
    ("piece", "orientation", "picture"),
    [
        ("I", 0, ("#", "#", "#", "#")),
        ("I", 1, ("####",)),
        ("J", 0, (".#", ".#", "##")),
        ("J", 1, ("#..", "###")),
        ("L", 0, ("#.", "#.", "##")),
        ("L", 1, ("###", "#..")),
        ("O", 0, ("##", "##")),
        ("S", 0, (".##", "##.")),
        ("S", 1, ("#.", "##", ".#")),
        ("T", 0, ("###", ".#.")),
        ("T", 1, (".#", "##", ".#")),
        ("T", 2, (".#.", "###")),
        ("T", 3, ("#.", "##", "#.")),
        ("Z", 0, ("##.", ".##")),
    ],
)
def test_orientations_are_clockwise_quarter_turns_from_the_letter(
    piece: str, orientation: int, picture: tuple[str, ...]
) -> None:
    """Orientation 0 looks like the letter; each number is one more clockwise quarter turn."""
    assert shape(piece, orientation).picture() == picture


def test_symmetric_orientations_fold_onto_the_lowest_number() -> None:
    """I2, S3, O1... name the same cells as I0, S1, O0 and are the same move."""
    assert Drop("I", 2, 0, 1) == Drop("I", 0, 0, 1)
    assert Drop("S", 3, 4, 2) == Drop("S", 1, 4, 2)
    assert Drop("O", 1, 4, 2) == Drop("O", 0, 4, 2)
    assert Drop("T", 2, 4, 2) != Drop("T", 0, 4, 2)


def test_middle_columns_for_even_and_odd_widths() -> None:
    """Width 10: columns e and f; an odd width has a single centre column (c of 5)."""
    assert middle_columns(10) == (4, 5)
    assert middle_columns(5) == (2, 2)
    assert middle_columns(7) == (3, 3)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("La", tsn.Triad("L", 0, 0)),
        ("J1a", tsn.Triad("J", 1, 0)),
        ("J₁a", tsn.Triad("J", 1, 0)),
        ("L_{3c}", tsn.Triad("L", 3, 2)),
        ("L_{3}c", tsn.Triad("L", 3, 2)),
        ("L_3c", tsn.Triad("L", 3, 2)),
        ("T0m", tsn.Triad("T", 0, 9)),
        ("T1c5", tsn.Triad("T", 1, 2, 5)),
        ("Ik20", tsn.Triad("I", 0, 8, 20)),
        ("Od (XX)", tsn.Triad("O", 0, 3, None, 2)),
        ("Od(XX)", tsn.Triad("O", 0, 3, None, 2)),
        ("J2a (X)", tsn.Triad("J", 2, 0, None, 1)),
        ("Ia (T) (!!)", tsn.Triad("I", 0, 0, None, 4, "!!")),
        ("Zc !?", tsn.Triad("Z", 0, 2, None, None, "!?")),
        ("Zc?", tsn.Triad("Z", 0, 2, None, None, "?")),
        ("S1b3 (XXX) ??", tsn.Triad("S", 1, 1, 3, 3, "??")),
        ("Tc (?!)", tsn.Triad("T", 0, 2, None, None, "?!")),
        ("  Tc (!)  ", tsn.Triad("T", 0, 2, None, None, "!")),
    ],
)
def test_triads_parse_in_every_written_form(text: str, expected: tsn.Triad) -> None:
    """Plain and subscript orientations, LaTeX-style braces, rows, clearance and annotations."""
    assert tsn.parse_triad(text) == expected


@pytest.mark.parametrize(
    ("text", "column", "words"),
    [
        ("", 0, "empty"),
        ("tc", 0, "capitals"),
        ("Qc", 0, "not a piece"),
        ("T", 1, "missing column"),
        ("T4c", 1, "0 to 3"),
        ("Ti", 1, "not columns"),
        ("TC", 1, "not a column"),
        ("Tc0", 2, "numbered from 1"),
        ("L_{3c", 5, "missing '}'"),
        ("Tc (XXXX)", 3, "(T)"),
        ("Tc (Y)", 3, "unknown mark"),
        ("Tc (X) (XX)", 7, "second clearance"),
        ("Tc ! ?", 5, "second annotation"),
        ("Tc (X", 3, "missing ')'"),
        ("Tc5x", 3, "unexpected"),
    ],
)
def test_syntax_errors_say_where(text: str, column: int, words: str) -> None:
    """Invalid triads raise NotationError with the 0-based column of the fault."""
    with pytest.raises(NotationError) as caught:
        tsn.parse_triad(text)
    assert caught.value.column == column
    assert words in caught.value.message


def test_canonical_triad_text() -> None:
    """Formatting omits orientation 0, writes marks in parentheses after a space."""
    assert tsn.format_triad(tsn.Triad("T", 0, 2)) == "Tc"
    assert tsn.format_triad(tsn.Triad("T", 1, 2, 5)) == "T1c5"
    assert tsn.format_triad(tsn.Triad("I", 0, 9, None, 4, "!!")) == "Im (T) (!!)"
    assert tsn.format_triad(tsn.Triad("O", 0, 3, None, 2)) == "Od (XX)"


def test_move_lists_split_on_commas_slashes_and_spaces() -> None:
    """The paper's cumulative lists and the 'L_{3c} / Sa' form parse to their triads."""
    assert [str(t) for t in tsn.parse_moves("Od (XX), J1a, Zc, Ta")] == [
        "Od (XX)",
        "J1a",
        "Zc",
        "Ta",
    ]
    assert [str(t) for t in tsn.parse_moves("L_{3c} / Sa")] == ["L3c", "Sa"]
    assert [str(t) for t in tsn.parse_moves("Od (XX) J1a !? Ta (T)")] == [
        "Od (XX)",
        "J1a (!?)",
        "Ta (T)",
    ]
    assert tsn.parse_moves("") == []
    with pytest.raises(NotationError) as caught:
        tsn.parse_moves("Od, , Ta")
    assert caught.value.column == 4
    with pytest.raises(NotationError) as caught:
        tsn.parse_moves("Od, Tx")
    assert caught.value.column == 5


def test_set_up_positions_parse_and_format_as_bracketed_runs() -> None:
    """Rows bottom to top; filled runs bare, empty runs in parentheses."""
    setup = tsn.parse_setup("[(1), 4] [(1), 2, (1), 1]")
    assert setup.runs == (((False, 1), (True, 4)), ((False, 1), (True, 2), (False, 1), (True, 1)))
    assert tsn.format_setup(setup) == "[(1), 4] [(1), 2, (1), 1]"
    rows = setup.rows(5, 6)
    assert rows[-1] == 0b11110 and rows[-2] == 0b10110 and not any(rows[:-2])
    assert tsn.setup_of(rows, 5) == setup
    assert tsn.parse_setup("  ") == tsn.Setup(())
    assert tsn.format_setup(tsn.setup_of((0,) * 6, 5)) == ""


@pytest.mark.parametrize(
    ("text", "column"),
    [("[3, (2)", 0), ("3, (2)]", 0), ("[3, x]", 4), ("[3, 2]", 4), ("[(0), 5]", 1), ("[]", 1)],
)
def test_bad_set_ups_are_syntax_errors(text: str, column: int) -> None:
    """Unclosed brackets, non-numbers, zero runs and same-kind neighbours are rejected."""
    with pytest.raises(NotationError) as caught:
        tsn.parse_setup(text)
    assert caught.value.column == column


def test_set_up_that_does_not_fit_the_well_is_a_position_error() -> None:
    """Runs must add up to the well's width, and rows must not outnumber its height."""
    with pytest.raises(PositionError):
        AsymmetricTetrisTactics(width=5).state_from_setup("[3, (3)]")
    with pytest.raises(PositionError):
        AsymmetricTetrisTactics(width=5, height=4).state_from_setup("[5] " * 5)


def test_the_papers_sample_game_replays_on_its_five_column_board() -> None:
    """Set-up [3, (2)] [3, (2)], then Od (XX), J1a, Zc, Ta: each triad resolves and plays."""
    game = AsymmetricTetrisTactics(width=5, height=20)
    state = game.state_from_setup("[3, (2)] [3, (2)]")
    played = tsn.play(state, "Od (XX), J1a, Zc, Ta")
    assert [str(m) for m in played] == ["Od1", "J1a1", "Zc2", "Ta2"]
    assert state.grid()[-3:] == [".....", "###..", "####."]
    # Canonically Zc removes a row, so it is written with its mark (the paper omits it).
    replay = game.state_from_setup("[3, (2)] [3, (2)]")
    written = []
    for move in played:
        replay.apply(Choice(move.piece))
        written.append(replay.san(move))
        replay.apply(move)
    assert written == ["Od (XX)", "J1a", "Zc (X)", "Ta"]
    assert state.rows_cleared == 3 and state.outcome() is None


def _ledge() -> AttState:
    """A ledge over columns a-c at row 2: a flat I at column b rests under it or on it."""
    game = AsymmetricTetrisTactics()
    state = game.state_from_setup("[1, (9)] [3, (7)]")
    state.apply(Choice("I"))
    return state


def test_triad_matching_two_resting_rows_is_ambiguous_until_the_row_is_given() -> None:
    """'I1b' fits under the ledge (row 1) and on it (row 3): the row disambiguates."""
    state = _ledge()
    with pytest.raises(AmbiguousMoveError) as caught:
        state.parse_san("I1b")
    assert caught.value.candidates == ("I1b1", "I1b3")
    assert state.parse_san("I1b3") == Drop("I", 1, 1, 3)
    assert state.san(Drop("I", 1, 1, 1)) == "I1b1"
    assert state.san(Drop("I", 1, 3, 1)) == "I1d"


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("Tb", "wrong_piece"),
        ("I", "not_your_turn"),
        ("I1d2", "not_reachable"),
        ("I1d (X)", "wrong_clearance"),
        ("I1b1 (X)", "wrong_clearance"),
        ("I1m", "not_reachable"),
        ("Ia2", "occupied"),
        ("Ia21", "off_board"),
    ],
)
def test_resolution_errors_are_illegal_moves_with_a_rule(text: str, rule: str) -> None:
    """Well-formed triads that name no legal move raise IllegalMoveError saying why."""
    with pytest.raises(IllegalMoveError) as caught:
        _ledge().parse_san(text)
    assert caught.value.rule == rule


def test_chooser_side_reads_a_piece_letter_only() -> None:
    """On the chooser's turn 'T' is the choice; a triad is not the chooser's to play."""
    state = AsymmetricTetrisTactics().new_state()
    assert state.parse_san("T") == Choice("T")
    assert state.san(Choice("T")) == "T"
    with pytest.raises(IllegalMoveError) as caught:
        state.parse_san("Tc")
    assert caught.value.rule == "not_your_turn"
    with pytest.raises(NotationError):
        state.parse_san("Tq")


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40))
def test_every_legal_move_round_trips_through_both_notations(seed: int, turns: int) -> None:
    """Along random games, san -> parse_san and long text -> move give the same move back,
    and the canonical short form re-formats to itself."""
    rng = random.Random(seed)
    state = AsymmetricTetrisTactics(max_placer_turns=0, max_rows=0).new_state()
    game = state.game
    for _ in range(turns):
        if state.outcome() is not None:
            break
        for move in state.legal_moves:
            short = state.san(move)
            assert state.parse_san(short) == move
            assert game.move_from_text(game.move_to_text(move)) == move
            if isinstance(move, Drop):
                assert tsn.format_triad(tsn.parse_triad(short)) == short
        state.apply(rng.choice(list(state.legal_moves)))


@given(
    st.sampled_from("IJLOSTZ"),
    st.integers(0, 3),
    st.integers(0, 9),
    st.none() | st.integers(1, 99),
    st.none() | st.integers(1, 4),
    st.none() | st.sampled_from(sorted(tsn.ANNOTATIONS)),
)
def test_triad_syntax_round_trips(
    piece: str,
    orientation: int,
    column: int,
    row: int | None,
    clearance: int | None,
    annotation: str | None,
) -> None:
    """format_triad then parse_triad gives back any triad value."""
    triad = tsn.Triad(piece, orientation, column, row, clearance, annotation)
    assert tsn.parse_triad(tsn.format_triad(triad)) == triad
