"""The PGN-like text form: exact layout, reading back, and error reports with line and column."""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine import RecordError, State, load_game
from engine.records import (
    GameRecord,
    RecordBuilder,
    RecordedMove,
    iter_records,
    read_record,
    read_records,
    record_from_state,
    write_record,
    write_records,
)

OPENING = [
    "PLACE(6-3, 7-2, 7-3, 7-4)",
    "PLACE(2-7, 2-8, 3-7, 3-8)",
    "PLACE(6-4, 6-5, 7-5, 7-6)",
]


def play_random(game_name: str, seed: int, max_plies: int = 400, **params: int) -> State[Any]:
    state = load_game(game_name, **params).new_state()
    rng = random.Random(seed)
    while not state.is_over() and state.ply < max_plies:
        state.apply(rng.choice(list(state.legal_moves)))
    return state


def tetress_record(**fields: Any) -> GameRecord:
    fields.setdefault("moves", tuple(RecordedMove(san) for san in OPENING))
    return GameRecord(
        game="tetress", params={"turn_limit": 150}, players=("alice", "bob"), **fields
    )


def issue_tuples(error: RecordError) -> list[tuple[int, int]]:
    return [(issue.line, issue.column) for issue in error.issues]


def test_writer_layout_is_pinned() -> None:
    """Tags in canonical order, a blank line, one line per move number, the result last."""
    record = tetress_record(
        event="Club night",
        moves=(
            RecordedMove(OPENING[0], think=0.123, clock=178.2, lag=0.004, mem=41.2),
            RecordedMove(OPENING[1], annotation="?!", comment="slow"),
            RecordedMove(OPENING[2], extra=(("hash", "1234"),)),
        ),
        extra_tags=(("Annotator", "lead"),),
    )
    assert write_record(record) == (
        '[Event "Club night"]\n'
        '[Site "?"]\n'
        '[Date "????.??.??"]\n'
        '[Round "?"]\n'
        '[Red "alice"]\n'
        '[Blue "bob"]\n'
        '[Game "tetress"]\n'
        '[GameParams "turn_limit=150"]\n'
        '[Result "*"]\n'
        '[Annotator "lead"]\n'
        "\n"
        "1. PLACE(6-3, 7-2, 7-3, 7-4) {think=0.123s clock=178.2s lag=0.004s mem=41.2MB} "
        "PLACE(2-7, 2-8, 3-7, 3-8)?! {slow}\n"
        "2. PLACE(6-4, 6-5, 7-5, 7-6) {hash=1234}\n"
        "*\n"
    )


def test_finished_tetress_game_reads_back_equal() -> None:
    """A whole random Tetress game, written and read, gives the same record."""
    state = play_random("tetress", seed=7)
    record = record_from_state(state, players=("a", "b"), event="E", round="3")
    assert record.result != "*" and record.termination is not None
    assert read_record(write_record(record)) == record


def test_finished_att_game_reads_back_equal() -> None:
    """A whole random ATT game (chooser letters, placer triads) reads back equal."""
    state = play_random("att", seed=3)
    record = record_from_state(state, players=("c", "p"))
    text = write_record(record)
    assert '[Chooser "c"]' in text and '[Placer "p"]' in text
    assert read_record(text) == record


def test_att_clearance_marks_read_back() -> None:
    """Triads with a clearance mark such as ``Oc (X)`` survive writing and reading."""
    for seed in range(40):
        state = play_random("att", seed=seed, width=4, height=8)
        record = record_from_state(state)
        if any("(" in move.san for move in record.moves):
            break
    else:
        pytest.fail("no random small-well game removed a row")
    assert read_record(write_record(record)) == record


def test_annotation_forms_are_all_read() -> None:
    """Attached, separate, parenthesised and $-glyph annotations all mean the same."""
    for form in ("{m}!", "{m} !", "{m} (!)", "{m} $1"):
        second = form.format(m=OPENING[1])
        text = f'[Game "tetress"]\n\n1. {OPENING[0]} {second}\n2. {OPENING[2]} *\n'
        read = read_record(text)
        assert [m.annotation for m in read.moves] == [None, "!", None], form


def test_comment_data_text_and_escapes_round_trip() -> None:
    """Free text with braces, backslashes, bars and data-like words survives a round trip."""
    tricky = ["a } b \\ c", "think=1s is what I said", "| leading bar"]
    record = GameRecord(
        game="tetress",
        event='quote " and \\ backslash\nnewline\rreturn',
        comment="think=2s game notes } here",
        moves=tuple(
            RecordedMove(san, think=0.5 if i else None, comment=tricky[i])
            for i, san in enumerate(OPENING)
        ),
    )
    text = write_record(record)
    assert read_record(text) == record
    multi_line = GameRecord(game="tetress", moves=(RecordedMove(OPENING[0], comment="one\n[Two]"),))
    assert read_record(write_record(multi_line)) == multi_line


def test_unfinished_game_may_carry_a_referee_verdict() -> None:
    """Termination may hold a referee verdict, with a decisive Result on unfinished moves."""
    record = tetress_record(result="0-1", termination="time_forfeit", reason="Red ran out of time")
    text = write_record(record)
    assert '[Termination "time_forfeit"]' in text
    assert '[Reason "Red ran out of time"]' in text
    assert read_record(text) == record


def test_setup_position_and_black_first_numbering() -> None:
    """A game from a set-up position with seat 1 to move writes ``1...`` and reads back."""
    game = load_game("tetress")
    start = game.new_state()
    start.apply(start.parse_san(OPENING[0]))
    initial = game.state_from_string(start.to_string())
    builder = RecordBuilder(game, initial=initial)
    builder.add(initial.parse_san(OPENING[1]))
    record = builder.finish()
    assert record.setup == start.to_string()
    text = write_record(record)
    assert '[SetUp "1"]' in text and "\n1... PLACE(2-7" in text
    assert read_record(text) == record


def test_every_error_is_reported_with_line_and_column() -> None:
    """Bad tag syntax, a bad move, an illegal move and a wrong result are all reported."""
    text = (
        '[Event "x"]\n'  # 1
        '[Site "unclosed]\n'  # 2: no closing quote, column 7
        '[Game "tetress"]\n'  # 3
        '[Result "1-0"]\n'  # 4
        "\n"  # 5
        "1. PLACE(6-3, 7-2, 7-3, 7-4) PLACE(6-3, 6-4, 6-5, 6-6)\n"  # 6: ply 2 illegal, column 30
        "2. PLACE(1-1 1-2) {think=abc}\n"  # 7: bad data column 20
        "0-1\n"  # 8: disagrees with Result tag
    )
    with pytest.raises(RecordError) as caught:
        read_record(text)
    issues = caught.value.issues
    assert issue_tuples(caught.value) == [(2, 7), (6, 30), (7, 20), (8, 1)]
    assert "no closing quote" in issues[0].message
    assert "illegal move at ply 2" in issues[1].message
    assert "think" in issues[2].message
    assert "disagrees with Result tag" in issues[3].message


def test_bad_move_syntax_is_located() -> None:
    """A move that is not notation at all is reported at its own line and column."""
    text = '[Game "tetress"]\n\n1. PLACE(6-3, 7-2, 7-3, 7-4) PLACE(zz)\n*\n'
    with pytest.raises(RecordError) as caught:
        read_record(text)
    assert issue_tuples(caught.value) == [(3, 36)]  # the move starts at 30; '(' is wrong
    assert "bad move syntax at ply 2" in caught.value.issues[0].message


def test_unknown_game_and_bad_params_are_reported() -> None:
    """An unknown game name points at the Game value; bad parameters at GameParams."""
    with pytest.raises(RecordError) as caught:
        read_record('[Game "chess"]\n\n*\n')
    assert issue_tuples(caught.value) == [(1, 8)]
    assert "unknown game" in caught.value.issues[0].message
    with pytest.raises(RecordError) as caught:
        read_record('[Game "tetress"]\n[GameParams "turn_limit=x no_such=3"]\n\n*\n')
    assert issue_tuples(caught.value) == [(2, 14)]
    with pytest.raises(RecordError) as caught:
        read_record('[Game "tetress"]\n[GameParams "no_such=3"]\n\n*\n')
    assert issue_tuples(caught.value) == [(2, 14)]
    assert "bad game parameters" in caught.value.issues[0].message


def test_missing_game_tag_is_an_error() -> None:
    """Without a Game tag the reader cannot know the rules and says so."""
    with pytest.raises(RecordError) as caught:
        read_record('[Event "x"]\n\n1. PLACE(6-3, 7-2, 7-3, 7-4) *\n')
    assert "missing Game tag" in caught.value.issues[0].message


def test_result_must_match_a_finished_game() -> None:
    """A finished game's Result and Termination tags must agree with the rules' outcome."""
    state = play_random("tetress", seed=11)
    record = record_from_state(state)
    outcome = state.outcome()
    assert outcome is not None
    wrong = "1/2-1/2" if outcome.result() != "1/2-1/2" else "1-0"
    text = write_record(record).replace(f'[Result "{record.result}"]', f'[Result "{wrong}"]')
    text = text.replace(f"\n{record.result}\n", f"\n{wrong}\n")
    with pytest.raises(RecordError) as caught:
        read_record(text)
    assert len(caught.value.issues) == 1
    assert "disagrees with the moves" in caught.value.issues[0].message


def test_rules_termination_on_unfinished_game_is_an_error() -> None:
    """Claiming a rules ending (e.g. no_legal_move) when the moves do not end the game fails."""
    record = tetress_record(result="1-0", termination="no_legal_move")
    with pytest.raises(RecordError) as caught:
        read_record(write_record(record))
    assert "not over" in caught.value.issues[0].message


def test_move_numbers_are_checked() -> None:
    """A wrong move number is reported where it is written."""
    text = (
        '[Game "tetress"]\n\n'
        "1. PLACE(6-3, 7-2, 7-3, 7-4) PLACE(2-7, 2-8, 3-7, 3-8)\n"
        "3. PLACE(6-4, 6-5, 7-5, 7-6) *\n"
    )
    with pytest.raises(RecordError) as caught:
        read_record(text)
    assert issue_tuples(caught.value) == [(4, 1)]
    assert "expected 2" in caught.value.issues[0].message


def test_unterminated_comment_is_reported() -> None:
    """A comment that never closes is reported at its opening brace."""
    text = '[Game "tetress"]\n\n1. PLACE(6-3, 7-2, 7-3, 7-4) {oops\n*\n'
    with pytest.raises(RecordError) as caught:
        read_record(text)
    assert issue_tuples(caught.value) == [(3, 30)]


def test_several_games_in_one_text() -> None:
    """Games separated by blank lines are all read, in order."""
    records = [
        tetress_record(round="1"),
        record_from_state(play_random("att", seed=1, max_plies=12), round="2"),
        tetress_record(round="3", moves=()),
    ]
    assert read_records(write_records(records)) == records
    assert read_records("") == []


def test_errors_of_several_games_use_file_lines() -> None:
    """In a multi-game text, each bad game's issues carry lines of the whole text."""
    good = write_record(tetress_record())
    bad = '[Game "tetress"]\n\n1. PLACE(0-0, 0-1, 0-2, 0-3) PLACE(0-0, 0-1, 0-2, 0-3) *\n'
    text = good + "\n" + bad + "\n" + good
    items = list(iter_records(text))
    assert [type(item).__name__ for item in items] == ["GameRecord", "RecordError", "GameRecord"]
    bad_line = good.count("\n") + 1 + 3
    error = items[1]
    assert isinstance(error, RecordError)
    assert issue_tuples(error) == [(bad_line, 30)]
    with pytest.raises(RecordError):
        read_records(text)


def test_read_record_wants_exactly_one_game() -> None:
    """``read_record`` refuses a text with two games."""
    text = write_records([tetress_record(), tetress_record()])
    with pytest.raises(RecordError, match="expected one game record, found 2"):
        read_record(text)


def test_without_verify_moves_are_kept_as_written() -> None:
    """``verify=False`` reads moves as text without replaying them (no legality check)."""
    text = '[Game "tetress"]\n\n1. PLACE(0-0,0-1,0-2,0-3) PLACE(0-0, 0-1, 0-2, 0-3) *\n'
    record = read_record(text, verify=False)
    assert [m.san for m in record.moves] == ["PLACE(0-0,0-1,0-2,0-3)", "PLACE(0-0, 0-1, 0-2, 0-3)"]


def test_reader_canonicalises_move_text() -> None:
    """Moves written loosely are stored in the game's canonical short notation."""
    text = '[Game "tetress"]\n\n1. PLACE(7-4,7-3, 7-2,6-3) *\n'
    assert read_record(text).moves[0].san == OPENING[0]


def test_windows_line_endings_read_the_same() -> None:
    """A record saved with CRLF line endings reads as the same record, same line numbers."""
    record = tetress_record(moves=(RecordedMove(OPENING[0], comment="a\nb"),))
    text = write_record(record)
    assert read_record(text.replace("\n", "\r\n")) == GameRecord(
        game="tetress",
        params={"turn_limit": 150},
        players=("alice", "bob"),
        moves=(RecordedMove(OPENING[0], comment="a\r\nb"),),
    )
    bad = text.replace("PLACE(6-3", "PLACE(6-x")
    with pytest.raises(RecordError) as lf:
        read_record(bad)
    with pytest.raises(RecordError) as crlf:
        read_record(bad.replace("\n", "\r\n"))
    assert crlf.value.issues == lf.value.issues
    assert (lf.value.issues[0].line, lf.value.issues[0].column) == (11, 10)
