"""The JSON form of game records, equivalent to the text form.

The object holds the same tags, in the same order, as the text form (all values strings), the
leading comment and one object per move::

    {"format": "tetromino-record", "version": 1,
     "tags": {"Event": "?", ..., "Game": "att", "Result": "0-1"},
     "comment": "...",
     "moves": [{"san": "T"}, {"san": "T1d", "annotation": "!?", "think": 0.12,
                "clock": 178.2, "lag": 0.004, "mem": 41.2, "extra": {"hash": "7f"},
                "search": {"depth": 6, "nodes": 5120, "score": 35, "pv": ["T1d", "T"]},
                "comment": "free text"}]}

Keys with no value are left out. Problems found by :func:`read_json` carry the JSON path in
their message; their line and column are 0 except for JSON syntax errors.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine.errors import RecordError, RecordIssue
from engine.records.build import RawMove, RawRecord, RawTag, Where, build_record
from engine.records.model import ANNOTATIONS, KEY_PATTERN, MEASURES, VALUE_PATTERN, GameRecord
from engine.records.search import search_from_json
from engine.records.tags import record_tags

FORMAT = "tetromino-record"
VERSION = 1
_MOVE_KEYS = frozenset(
    {"san", "annotation", "extra", "comment", "search"} | {k for k, _ in MEASURES}
)


def record_to_json(record: GameRecord, seat_names: Sequence[str] | None = None) -> dict[str, Any]:
    """A JSON-ready ``dict`` equivalent to :func:`~engine.records.pgn.write_record`'s text."""
    moves: list[dict[str, Any]] = []
    for move in record.moves:
        item: dict[str, Any] = {"san": move.san}
        if move.annotation is not None:
            item["annotation"] = move.annotation
        for key, _ in MEASURES:
            value = getattr(move, key)
            if value is not None:
                item[key] = value
        if move.extra:
            item["extra"] = dict(move.extra)
        if move.search is not None:
            item["search"] = move.search.as_json()
        if move.comment:
            item["comment"] = move.comment
        moves.append(item)
    obj: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "tags": dict(record_tags(record, seat_names)),
    }
    if record.comment:
        obj["comment"] = record.comment
    obj["moves"] = moves
    return obj


def write_json(record: GameRecord, indent: int | None = None) -> str:
    """The JSON text of ``record`` (one line unless ``indent`` is given)."""
    return json.dumps(record_to_json(record), indent=indent, ensure_ascii=False)


def write_json_lines(records: Iterable[GameRecord]) -> str:
    """Several records as JSON Lines, one record per line."""
    return "".join(write_json(record) + "\n" for record in records)


def read_json(text: str, verify: bool = True) -> GameRecord:
    """A record from its JSON text; raises :class:`RecordError` listing every problem."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError([RecordIssue(exc.lineno, exc.colno, f"bad JSON: {exc.msg}")]) from None
    return record_from_json(obj, verify=verify)


def read_json_lines(text: str, verify: bool = True) -> list[GameRecord]:
    """Records from JSON Lines; problems name the line they are on."""
    records: list[GameRecord] = []
    issues: list[RecordIssue] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(read_json(line, verify=verify))
        except RecordError as exc:
            issues.extend(
                RecordIssue(number, issue.column if issue.line else 0, issue.message)
                for issue in exc.issues
            )
    if issues:
        raise RecordError(issues)
    return records


def record_from_json(obj: object, verify: bool = True) -> GameRecord:
    """A record from a decoded JSON object (as :func:`record_to_json` makes)."""
    issues: list[RecordIssue] = []
    raw = _raw_from_json(obj, issues)
    record = build_record(raw, issues, verify=verify) if raw is not None else None
    if issues or record is None:
        raise RecordError(issues or [RecordIssue(0, 0, "not a game record")])
    return record


def _raw_from_json(obj: object, issues: list[RecordIssue]) -> RawRecord | None:
    def problem(path: str, message: str) -> None:
        issues.append(Where(0, 0, path).issue(message))

    if not isinstance(obj, Mapping):
        problem("$", "a game record is a JSON object")
        return None
    if obj.get("format", FORMAT) != FORMAT:
        problem("format", f"expected {FORMAT!r}")
    if obj.get("version", VERSION) != VERSION:
        problem("version", f"this reader knows version {VERSION}")
    raw = RawRecord(start=Where(0, 0, "$"))
    tags = obj.get("tags")
    if not isinstance(tags, Mapping):
        problem("tags", "expected an object of tag names to string values")
        tags = {}
    for name, value in tags.items():
        where = Where(0, 0, f"tags.{name}")
        if not isinstance(value, str):
            problem(f"tags.{name}", "tag values are strings")
            continue
        raw.tags.append(RawTag(str(name), value, where, where))
    comment = obj.get("comment", "")
    if isinstance(comment, str):
        raw.comment = comment.strip()
    else:
        problem("comment", "expected a string")
    moves = obj.get("moves", [])
    if not isinstance(moves, list):
        problem("moves", "expected a list")
        moves = []
    for index, item in enumerate(moves):
        path = f"moves[{index}]"
        move = _raw_move(item, Where(0, 0, path), problem)
        if move is not None:
            raw.moves.append(move)
    return raw


def _raw_move(item: object, where: Where, problem: Any) -> RawMove | None:
    path = where.label
    if isinstance(item, str):
        item = {"san": item}
    if not isinstance(item, Mapping) or not isinstance(item.get("san"), str) or not item["san"]:
        problem(path, 'a move is an object with a "san" string')
        return None
    move = RawMove(item["san"].strip(), where)
    for key in item:
        if key not in _MOVE_KEYS:
            problem(f"{path}.{key}", "unknown move key")
    annotation = item.get("annotation")
    if annotation is not None:
        if annotation in ANNOTATIONS:
            move.annotation = annotation
        else:
            problem(f"{path}.annotation", f"must be one of {' '.join(ANNOTATIONS)}")
    for key, _ in MEASURES:
        value = item.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            problem(f"{path}.{key}", "expected a number")
        else:
            move.details[key] = float(value)
    extra = item.get("extra", {})
    if isinstance(extra, Mapping):
        pairs = []
        for key, value in extra.items():
            if not isinstance(value, str) or not KEY_PATTERN.match(str(key)):
                problem(f"{path}.extra.{key}", "extra data maps names to strings")
            elif not VALUE_PATTERN.match(value):
                problem(f"{path}.extra.{key}", "value must have no blanks, braces, \\ or |")
            else:
                pairs.append((str(key), value))
        if pairs:
            move.details["extra"] = tuple(pairs)
    else:
        problem(f"{path}.extra", "expected an object")
    if "search" in item:
        try:
            move.details["search"] = search_from_json(item["search"])
        except ValueError as exc:
            problem(f"{path}.search", str(exc))
    comment = item.get("comment")
    if comment is not None:
        if isinstance(comment, str):
            move.details["comment"] = comment
        else:
            problem(f"{path}.comment", "expected a string")
    return move


__all__ = [
    "read_json",
    "read_json_lines",
    "record_from_json",
    "record_to_json",
    "write_json",
    "write_json_lines",
]
