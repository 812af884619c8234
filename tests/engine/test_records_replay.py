"""Replaying records to any ply, and building records from play."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from engine import RecordError, State, load_game
from engine.records import (
    GameRecord,
    RecordBuilder,
    RecordedMove,
    positions,
    read_record,
    record_from_state,
    replay,
    verify_record,
    write_record,
)


def play_random(game_name: str, seed: int, max_plies: int = 60) -> State[Any]:
    state = load_game(game_name).new_state()
    rng = random.Random(seed)
    while not state.is_over() and state.ply < max_plies:
        state.apply(rng.choice(list(state.legal_moves)))
    return state


@pytest.mark.parametrize("game_name", ["tetress", "att"])
def test_replay_reaches_every_ply(game_name: str) -> None:
    """``replay(record, k)`` is the position after the first k moves, for every k."""
    state = play_random(game_name, seed=5)
    record = record_from_state(state)
    expected = state.copy()
    strings = [expected.to_string()]
    for _ in range(len(state.history)):
        expected.undo()
        strings.append(expected.to_string())
    strings.reverse()
    for ply in range(record.plies + 1):
        assert replay(record, ply).to_string() == strings[ply]
    assert replay(record).to_string() == state.to_string()
    assert replay(record, -1).to_string() == strings[-2]
    assert [s.to_string() for s in positions(record)] == strings


def test_replay_out_of_range() -> None:
    """A ply beyond the record is an ``IndexError``, not a silent clamp."""
    record = record_from_state(play_random("tetress", seed=1, max_plies=4))
    with pytest.raises(IndexError):
        replay(record, 5)
    with pytest.raises(IndexError):
        replay(record, -6)


def test_replay_reports_the_bad_ply() -> None:
    """A record holding an illegal move fails to replay past it, naming the ply."""
    record = record_from_state(play_random("tetress", seed=2, max_plies=4))
    bad = dataclasses.replace(record, moves=(*record.moves[:2], record.moves[0]))
    assert replay(bad, 2).ply == 2
    with pytest.raises(RecordError, match="ply 3"):
        replay(bad)


def test_builder_matches_record_from_state() -> None:
    """Building move by move and recording a finished state give the same record."""
    state = play_random("att", seed=9)
    game = state.game
    builder = RecordBuilder(game, players=("x", "y"), event="E")
    for move in state.history:
        builder.add(move, think=0.5)
    details = [{"think": 0.5}] * len(state.history)
    assert builder.finish() == record_from_state(
        state, players=("x", "y"), event="E", details=details
    )


def test_builder_fills_result_from_the_rules() -> None:
    """A finished game's Result and Termination come from its outcome."""
    state = play_random("tetress", seed=4, max_plies=400)
    outcome = state.outcome()
    assert outcome is not None
    record = record_from_state(state)
    assert (record.result, record.termination) == (outcome.result(), outcome.termination.value)
    with pytest.raises(ValueError, match="the rules ended this game"):
        record_from_state(state, termination="time_forfeit")


def test_builder_rejects_illegal_moves() -> None:
    """The builder plays each move on its own position, so an illegal move is refused."""
    game = load_game("tetress")
    builder = RecordBuilder(game)
    move = next(iter(builder.state.legal_moves))
    builder.add(move)
    with pytest.raises(ValueError):
        builder.add(move)
    assert builder.finish().plies == 1


def test_builder_annotate_last() -> None:
    """Measurements known only after a move (e.g. latency) can be added to it."""
    builder = RecordBuilder(load_game("tetress"))
    builder.add(next(iter(builder.state.legal_moves)), think=1.0)
    builder.annotate_last(lag=0.01, comment="late")
    move = builder.moves[-1]
    assert (move.think, move.lag, move.comment) == (1.0, 0.01, "late")


def test_record_from_state_detects_setup() -> None:
    """A state created from a position string records that position as its set-up."""
    game = load_game("tetress")
    played = play_random("tetress", seed=3, max_plies=6)
    resumed = game.state_from_string(played.to_string())
    resumed.apply(next(iter(resumed.legal_moves)))
    record = record_from_state(resumed)
    assert record.setup == played.to_string()
    assert record.plies == 1
    assert read_record(write_record(record)) == record
    assert replay(record).to_string() == resumed.to_string()


def test_verify_record_canonicalises_and_rejects() -> None:
    """``verify_record`` rewrites loose notation canonically and lists every problem."""
    loose = GameRecord(game="tetress", moves=(RecordedMove("PLACE(7-4,7-3,7-2,6-3)"),))
    assert verify_record(loose).moves[0].san == "PLACE(6-3, 7-2, 7-3, 7-4)"
    bad = GameRecord(game="tetress", moves=loose.moves * 2, result="1-0", termination="four_rows")
    with pytest.raises(RecordError) as caught:
        verify_record(bad)
    assert len(caught.value.issues) == 1  # replay stops at the illegal move, before the result
    assert "illegal move at ply 2" in caught.value.issues[0].message
    with pytest.raises(RecordError, match="unknown game"):
        verify_record(GameRecord(game="go"))
