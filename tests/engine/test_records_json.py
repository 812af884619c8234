"""The JSON form: its shape, JSON Lines, and its error reports."""

from __future__ import annotations

import json

import pytest

from engine import RecordError
from engine.records import (
    GameRecord,
    RecordedMove,
    read_json,
    read_json_lines,
    record_from_json,
    record_to_json,
    write_json,
    write_json_lines,
)

OPENING = ("PLACE(6-3, 7-2, 7-3, 7-4)", "PLACE(2-7, 2-8, 3-7, 3-8)")


def sample() -> GameRecord:
    return GameRecord(
        game="tetress",
        players=("alice", "bob"),
        moves=(
            RecordedMove(OPENING[0], think=0.25, clock=59.75, extra=(("hash", "10"),)),
            RecordedMove(OPENING[1], annotation="!", comment="solid"),
        ),
        result="0-1",
        termination="time_forfeit",
    )


def test_json_shape_is_pinned() -> None:
    """Tags as an ordered object of strings, one object per move with only the keys it uses."""
    obj = record_to_json(sample())
    assert obj == {
        "format": "tetromino-record",
        "version": 1,
        "tags": {
            "Event": "?",
            "Site": "?",
            "Date": "????.??.??",
            "Round": "?",
            "Red": "alice",
            "Blue": "bob",
            "Game": "tetress",
            "Result": "0-1",
            "Termination": "time_forfeit",
        },
        "moves": [
            {"san": OPENING[0], "think": 0.25, "clock": 59.75, "extra": {"hash": "10"}},
            {"san": OPENING[1], "annotation": "!", "comment": "solid"},
        ],
    }
    assert list(obj["tags"]) == list(json.loads(write_json(sample()))["tags"])


def test_json_lines_round_trip() -> None:
    """Several records as JSON Lines read back equal, in order."""
    records = [sample(), GameRecord(game="att", round="2")]
    text = write_json_lines(records)
    assert text.count("\n") == 2
    assert read_json_lines(text) == records


def test_json_syntax_error_has_line_and_column() -> None:
    """Broken JSON is reported where the decoder stopped."""
    with pytest.raises(RecordError) as caught:
        read_json('{"tags": {\n  "Game": "tetress",,\n}}')
    issue = caught.value.issues[0]
    assert (issue.line, issue.column) == (2, 21)  # the second comma
    assert "bad JSON" in issue.message


def test_json_semantic_errors_name_their_path() -> None:
    """Every problem is reported, each with the JSON path it concerns."""
    obj = record_to_json(sample())
    obj["moves"][0]["think"] = "fast"
    obj["moves"][1]["annotation"] = "?!?"
    obj["moves"].append({"san": "PLACE(0-0, 0-1, 0-2, 0-3)", "colour": "red"})
    with pytest.raises(RecordError) as caught:
        record_from_json(obj)
    messages = [issue.message for issue in caught.value.issues]
    assert any(m.startswith("moves[0].think:") for m in messages)
    assert any(m.startswith("moves[1].annotation:") for m in messages)
    assert any(m.startswith("moves[2].colour: unknown move key") for m in messages)
    assert any("illegal move at ply 3" in m for m in messages)
    assert len(messages) == 4


def test_json_lines_errors_carry_the_line() -> None:
    """In JSON Lines, each problem names the line of the bad record."""
    good = write_json(sample())
    bad = json.dumps({"tags": {"Game": "nope"}, "moves": []})
    with pytest.raises(RecordError) as caught:
        read_json_lines(f"{good}\n{bad}\n")
    assert [issue.line for issue in caught.value.issues] == [2]
    assert "unknown game" in caught.value.issues[0].message


def test_json_moves_may_be_bare_strings() -> None:
    """Hand-written JSON may list moves as plain strings."""
    obj = {"tags": {"Game": "tetress"}, "moves": list(OPENING)}
    record = record_from_json(obj)
    assert [m.san for m in record.moves] == list(OPENING)
