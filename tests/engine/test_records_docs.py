"""The examples in docs/records.md are real: they read, and the error example fails as shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import RecordError
from engine.records import read_record, record_from_json, write_record

DOC = Path(__file__).resolve().parents[2] / "docs" / "records.md"


def blocks(language: str = "") -> list[str]:
    """The fenced code blocks of the doc whose info string is ``language``."""
    found: list[str] = []
    current: list[str] | None = None
    kind = ""
    for line in DOC.read_text(encoding="utf-8").splitlines():
        fence = line.strip()
        if current is None and fence.startswith("```"):
            current, kind = [], fence[3:].strip()
        elif current is not None and fence == "```":
            if kind == language:
                found.append("\n".join(current) + "\n")
            current = None
        elif current is not None:
            current.append(line)
    return found


def test_every_record_example_reads() -> None:
    """Each text example that starts with an Event tag is a valid record."""
    examples = [b for b in blocks() if b.startswith('[Event "') and "unclosed" not in b]
    assert len(examples) == 3
    games = set()
    for text in examples:
        record = read_record(text)
        games.add(record.game)
        assert read_record(write_record(record)) == record
    assert games == {"tetress", "att"}


def test_error_example_gives_the_documented_issues() -> None:
    """The documented bad record raises exactly the documented issues."""
    bad = next(b for b in blocks() if "unclosed" in b)
    shown = next(b for b in blocks() if b.startswith("line 2, column 7"))
    with pytest.raises(RecordError) as caught:
        read_record(bad)
    assert [str(issue) for issue in caught.value.issues] == shown.strip().splitlines()


def test_json_example_reads() -> None:
    """The JSON example is a valid record."""
    (example,) = blocks("json")
    record = record_from_json(json.loads(example))
    assert record.termination == "time_forfeit" and record.plies == 3
