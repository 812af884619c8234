"""Making lessons: the worst moves of a seat by the reference judgement, with the good moves,
depth, game and ply and a sentence; the same from a local record as from a stored analysis."""

from __future__ import annotations

import json

import pytest
from lessondata import NODES, SECRETS, random_record

from client_sdk.reference.judge import GOOD_MOVES, judge
from client_sdk.reference.lessons import PER_GAME, lessons_from_judgements, lessons_from_record
from engine.records import write_record
from engine.records.lessons import KINDS, LessonsFile, check_lesson, lesson_state, write_lessons
from referee.analysis.annotate import annotate
from referee.analysis.gameeval import analyse, analysis_of
from referee.analysis.lessonbook import game_lessons


@pytest.mark.slow
def test_a_seats_lessons_are_its_worst_marked_moves_with_what_went_wrong() -> None:
    """Each lesson is a marked move of the seat, at most PER_GAME, worst first by drop; its
    position passes the rules check, the move played is not among its good moves, and it says
    what went wrong in a sentence with a known kind of mistake."""
    record = random_record(3)
    judged = {j.ply: j for j in judge(record, nodes=NODES)}
    for seat in (0, 1):
        lessons = lessons_from_record(record, seat, nodes=NODES, bot="b", game_id="g7")
        marked = [j for j in judged.values() if j.glyph in ("?!", "?", "??") and j.ply % 2 != seat]
        assert len(lessons) == min(PER_GAME, len(marked)) > 0
        worst = sorted(marked, key=lambda j: j.drop, reverse=True)[:PER_GAME]
        assert sorted(x.ply for x in lessons) == sorted(j.ply for j in worst)
        for lesson in lessons:
            check_lesson(lesson)
            state = lesson_state(lesson)
            assert state.to_move == seat and lesson.seat == seat
            assert lesson.played == record.moves[lesson.ply - 1].san
            assert lesson.played not in [m for m, _ in lesson.good]
            assert 1 <= len(lesson.good) <= GOOD_MOVES and lesson.depth >= 1
            assert lesson.kind in KINDS and lesson.sentence.endswith(".")
            assert (lesson.game_id, lesson.nodes, lesson.bot) == ("g7", NODES, "b")
            assert (lesson.best_score or 0) > (lesson.played_score or 0)


@pytest.mark.slow
def test_the_server_and_the_sdk_make_the_same_lessons_of_a_game() -> None:
    """The lessons of a stored analysis (what the server serves) equal those the SDK makes
    from the record itself: one judgement, one lesson maker."""
    record = random_record(4)
    text = write_record(record)
    stored = json.loads(json.dumps(analyse(text, NODES)))  # as kept in the database
    for seat in (0, 1):
        here = lessons_from_record(record, seat, nodes=NODES, bot="b", version="v1", game_id="g")
        served = game_lessons(text, analysis_of(stored), seat, bot="b", version="v1", game_id="g")
        assert served is not None
        assert [(x.ply, x.played, x.kind) for x in served] == [
            (x.ply, x.played, x.kind) for x in here
        ]
        assert [m for x in served for m, _ in x.good] == [m for x in here for m, _ in x.good]


@pytest.mark.slow
def test_annotate_marks_the_moves_the_lessons_come_from() -> None:
    """``referee annotate`` and the lessons use one judgement: every lesson's ply carries the
    same mark in the annotated record."""
    record = random_record(5)
    annotated, _ = annotate(record, nodes=NODES)
    judged = judge(record, nodes=NODES)
    lessons = lessons_from_judgements(record, judged, 0, nodes=NODES)
    assert lessons
    for lesson in lessons:
        assert annotated.moves[lesson.ply - 1].annotation == lesson.glyph


def test_lessons_hold_nothing_of_either_bots_thinking() -> None:
    """A lessons file made from a game whose records hold both bots' think notes contains
    neither note: positions, moves and the reference's scores only."""
    record = random_record(6)
    text = write_record(record)
    assert all(secret in text for secret in SECRETS)
    lessons = [x for seat in (0, 1) for x in lessons_from_record(record, seat, nodes=NODES)]
    written = write_lessons(LessonsFile(tuple(lessons), "b"))
    assert lessons and not any(secret in written for secret in SECRETS)


@pytest.mark.slow
def test_att_lessons_name_the_choosers_and_the_placers_mistakes() -> None:
    """In a random ATT game the chooser's lessons are about pieces and the placer's about its
    well; both read back from a lessons file checked against the rules."""
    import random

    from engine.records import RecordBuilder
    from engine.records.lessons import read_lessons
    from engine.registry import load_game

    game = load_game("att")
    state = game.new_state()
    rng = random.Random(2)
    builder = RecordBuilder(game, players=("chooser", "placer"))
    while state.outcome() is None and state.ply < 60:
        move = rng.choice(list(state.legal_moves))
        builder.add(move)
        state.apply(move)
    record = builder.finish()
    chooser = lessons_from_record(record, 0, nodes=150)
    placer = lessons_from_record(record, 1, nodes=150)
    assert chooser and placer
    assert {x.kind for x in chooser} <= {"easy_piece", "missed_win", "walked_into_loss"}
    assert {x.kind for x in placer} <= {"holes", "stack", "positional", "walked_into_loss"}
    text = write_lessons(LessonsFile(tuple(chooser + placer), "b"))
    assert read_lessons(text).lessons == tuple(chooser + placer)
