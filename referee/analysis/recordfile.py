"""Reading one game record from a file, PGN-like or JSON, with every problem located."""

from __future__ import annotations

from pathlib import Path

from engine.errors import RecordError, RecordIssue
from engine.records import GameRecord, read_json, read_record

#: A record file larger than this is refused unread (a long game is a few hundred kilobytes).
MAX_RECORD_BYTES = 16 * 1024 * 1024


def is_json(path: str, text: str) -> bool:
    """JSON by suffix, else by its first non-blank character."""
    if path.lower().endswith(".json"):
        return True
    if path.lower().endswith(".pgn"):
        return False
    return text.lstrip()[:1] in ("{", "[")


def read_record_file(path: str) -> GameRecord:
    """The one record in ``path``; :class:`RecordError` (line, column) for every problem,
    ``OSError`` if it cannot be read."""
    file = Path(path)
    if file.stat().st_size > MAX_RECORD_BYTES:
        raise RecordError([RecordIssue(1, 1, f"larger than {MAX_RECORD_BYTES} bytes")])
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError([RecordIssue(1, exc.start + 1, "not UTF-8 text")]) from None
    return read_text(path, text)


def read_text(path: str, text: str) -> GameRecord:
    if is_json(path, text):
        return read_json(text)
    return read_record(text)


def issue_lines(path: str, error: RecordError) -> list[str]:
    """One ``FILE:LINE:COLUMN: message`` line per problem (compiler style)."""
    return [f"{path}:{i.line}:{i.column}: {i.message}" for i in error.issues]
