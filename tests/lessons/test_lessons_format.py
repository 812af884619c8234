"""The lessons file (engine/records/lessons.py): it round-trips, reads what people add by
hand, and names every bad line."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import RecordError
from engine.records.lessons import (
    FORMAT,
    VERSION,
    Lesson,
    LessonsFile,
    Limits,
    read_lessons,
    solves,
    write_lessons,
)
from engine.registry import load_game

_text = st.text(max_size=30)
_score = st.floats(allow_nan=False, allow_infinity=False, width=64)
_moves = st.lists(st.tuples(_text, _score), min_size=1, max_size=4).map(tuple)
_lesson = st.builds(
    Lesson,
    game=_text,
    position=_text,
    seat=st.sampled_from((0, 1)),
    good=_moves,
    params=st.lists(st.tuples(st.text(min_size=1, max_size=8), st.integers(0, 10**6)))
    .map(dict)
    .map(lambda d: tuple(d.items())),
    history=st.lists(_text, max_size=5).map(tuple),
    played=st.none() | st.text(min_size=1, max_size=30),
    played_score=st.none() | _score,
    depth=st.integers(0, 64),
    nodes=st.integers(0, 10**9),
    glyph=st.none() | st.sampled_from(("?!", "?", "??")),
    kind=_text,
    sentence=_text,
    bot=_text,
    version=_text,
    game_id=_text,
    ply=st.integers(0, 10**4),
    clock_s=st.none() | st.floats(0, 1e6),
)
_limits = st.builds(Limits, st.floats(0, 1e5), st.floats(0, 1e5), st.floats(0, 1e5))


@settings(max_examples=150, deadline=None)
@given(st.lists(_lesson, max_size=6).map(tuple), _text, _limits, _text)
def test_a_lessons_file_round_trips(
    lessons: tuple[Lesson, ...], bot: str, limits: Limits, comment: str
) -> None:
    """Any lessons file written and read back (syntax only) is the same file."""
    book = LessonsFile(lessons, bot, limits, comment)
    assert read_lessons(write_lessons(book), verify=False) == book


def _lesson_in_play() -> Lesson:
    game = load_game("tetress")
    state = game.new_state()
    history = []
    rng = random.Random(5)
    for _ in range(4):
        move = rng.choice(sorted(list(state.legal_moves), key=state.san))
        history.append(state.san(move))
        state.apply(move)
    moves = sorted(state.san(m) for m in list(state.legal_moves))
    return Lesson(
        game="tetress",
        position=state.to_string(),
        seat=state.to_move,
        good=((moves[0], 12.5), (moves[1], 10.0)),
        params=tuple(sorted(game.params.items())),
        history=tuple(history),
        played=moves[-1],
        played_score=-20.0,
        kind="gave_room",
        sentence="Left the opponent 9 moves where 3 were expected.",
        game_id="g1",
        ply=5,
    )


def test_a_real_lesson_is_checked_against_the_rules_and_read_back() -> None:
    """A lesson from play passes the rules check (position, seat, history, moves) and reads
    back equal; its good moves solve it and the played move does not."""
    lesson = _lesson_in_play()
    book = LessonsFile((lesson,), "me")
    back = read_lessons(write_lessons(book))
    assert back == book
    state = load_game("tetress").state_from_string(lesson.position)
    good = state.game.move_to_text(state.parse_san(lesson.good[1][0]))
    played = state.game.move_to_text(state.parse_san(lesson.played or ""))
    assert solves(state, lesson, good) and not solves(state, lesson, played)


def test_comments_blank_lines_and_a_hand_added_position_are_read() -> None:
    """A person may add '#' comments, blank lines and a position of their own: no history,
    no played move, only the game, position, seat and good moves."""
    lesson = _lesson_in_play()
    text = write_lessons(LessonsFile((lesson,), "me"))
    own = json.dumps(
        {
            "game": "tetress",
            "position": lesson.position,
            "seat": lesson.seat,
            "good": [{"move": lesson.good[0][0], "score": 0}],
        }
    )
    book = read_lessons(f"# my file\n\n{text}\n# one of mine:\n{own}\n")
    added = book.lessons[1]
    assert added.history == () and added.played is None and added.kind == "own"


def test_every_bad_line_is_named() -> None:
    """A wrong header, unreadable JSON, an illegal move and a history that does not lead to the
    position each give an issue with its line number, all in one RecordError."""
    lesson = _lesson_in_play()
    good = write_lessons(LessonsFile((lesson,), "me")).splitlines()
    illegal = good[1].replace(lesson.good[0][0], "PLACE(0-0, 0-1, 0-2, 9-9)")
    wrong_history = good[1].replace('"history": [', '"history": ["PLACE(5-5, 5-6, 5-7, 5-8)", ')
    text = "\n".join([good[0], "{not json", illegal, wrong_history, "[1, 2]"])
    with pytest.raises(RecordError) as caught:
        read_lessons(text)
    lines = [(i.line, i.message) for i in caught.value.issues]
    assert [n for n, _ in lines] == [2, 3, 4, 5]
    assert "not JSON" in lines[0][1] and "PLACE(0-0, 0-1, 0-2, 9-9)" in lines[1][1]
    assert "history" in lines[2][1] and "object" in lines[3][1]


@pytest.mark.parametrize(
    ("header", "words"),
    [
        ('{"format": "tetromino-record", "version": 1}', "not a lessons header"),
        (f'{{"format": "{FORMAT}", "version": {VERSION + 1}}}', "update the SDK"),
        (f'{{"format": "{FORMAT}", "version": {VERSION}, "limits": {{"memory_mb": -1}}}}', ">= 0"),
    ],
)
def test_a_wrong_header_is_refused_in_one_line(header: str, words: str) -> None:
    """Another format, a newer version or negative limits: one issue on line 1 saying so."""
    with pytest.raises(RecordError) as caught:
        read_lessons(header + "\n")
    assert [i.line for i in caught.value.issues] == [1]
    assert words in caught.value.issues[0].message


def test_an_empty_text_has_no_header() -> None:
    """A text with no header line is not a lessons file."""
    with pytest.raises(RecordError, match="no header"):
        read_lessons("# nothing here\n")
