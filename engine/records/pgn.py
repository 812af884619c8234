"""The PGN-like text form of game records: :func:`write_record` and :func:`read_record`.

See ``docs/records.md`` for the format. The reader collects every problem it can find (bad tag
syntax, unknown game, bad move syntax, illegal moves, a result that disagrees with the moves...)
and raises one :class:`~engine.errors.RecordError` listing them with their line and column.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence

from engine.errors import RecordError, RecordIssue
from engine.records.build import RawRecord, RawTag, Where, build_record
from engine.records.model import GameRecord
from engine.records.movetext import MoveText
from engine.records.tags import (
    comment_body,
    escape_comment,
    escape_tag_value,
    is_data_token,
    record_tags,
    unescape,
)

_TAG_LINE_START = re.compile(r"\s*\[\s*[A-Za-z][A-Za-z0-9_]*\s+\"")
_TAG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


# ---------------------------------------------------------------------------------------------
# Writing


def write_record(record: GameRecord, seat_names: Sequence[str] | None = None) -> str:
    """The text form of ``record``: tag pairs, a blank line, the moves and the result.

    ``seat_names`` names the player tags; by default they come from the registered game.
    One line per move number keeps diffs and long games readable.
    """
    lines = [
        f'[{name} "{escape_tag_value(value)}"]' for name, value in record_tags(record, seat_names)
    ]
    lines.append("")
    if record.comment:
        lines.append("{" + _leading_comment(record.comment) + "}")
    first_seat = _first_seat(record)
    line: list[str] = []
    for index, move in enumerate(record.moves):
        seat = (index + first_seat) % 2
        number = (index + first_seat) // 2 + 1
        if seat == 0 or index == 0:
            if line:
                lines.append(" ".join(line))
            line = [f"{number}." if seat == 0 else f"{number}..."]
        text = move.san + (move.annotation or "")
        if move.has_comment:
            text += " {" + comment_body(move) + "}"
        line.append(text)
    if line:
        lines.append(" ".join(line))
    lines.append(record.result)
    return "\n".join(lines) + "\n"


def write_records(records: Iterable[GameRecord]) -> str:
    """Several records, separated by blank lines (the form :func:`read_records` reads)."""
    return "\n".join(write_record(record) for record in records)


def _leading_comment(text: str) -> str:
    # A leading comment is free text only; a bar keeps it from being read as move data.
    escaped = escape_comment(text)
    first = escaped.split(maxsplit=1)[0]
    return ("| " + escaped) if first == "|" or is_data_token(first) else escaped


def _first_seat(record: GameRecord) -> int:
    if record.setup is None:
        return 0
    from engine.registry import load_game

    try:
        return load_game(record.game, **record.params).state_from_string(record.setup).to_move
    except Exception:  # the writer writes what it is given; the reader will report the problem
        return 0


# ---------------------------------------------------------------------------------------------
# Reading


def read_record(text: str, verify: bool = True) -> GameRecord:
    """Read exactly one record; raises :class:`RecordError` listing every problem found."""
    records = read_records(text, verify=verify)
    if len(records) != 1:
        raise RecordError([RecordIssue(1, 1, f"expected one game record, found {len(records)}")])
    return records[0]


def read_records(text: str, verify: bool = True) -> list[GameRecord]:
    """Read every record in ``text`` (games separated by blank lines, like PGN).

    Raises one :class:`RecordError` with the problems of every game, in text order.
    With ``verify`` (the default) every move is replayed and checked against the rules.
    """
    records: list[GameRecord] = []
    issues: list[RecordIssue] = []
    for item in iter_records(text, verify=verify):
        if isinstance(item, RecordError):
            issues.extend(item.issues)
        else:
            records.append(item)
    if issues:
        raise RecordError(issues)
    return records


def iter_records(text: str, verify: bool = True) -> Iterator[GameRecord | RecordError]:
    """Each game of ``text`` in turn: its record, or the :class:`RecordError` it raised.

    For tools that want to keep the good games of a file with a few bad ones.
    """
    reader = _Reader(text)
    for start, tag_end, end in reader.split_games():
        issues: list[RecordIssue] = []
        raw = reader.parse_game(start, tag_end, end, issues)
        record = build_record(raw, issues, verify=verify)
        if issues or record is None:
            yield RecordError(sorted(issues, key=lambda issue: (issue.line, issue.column)))
        else:
            yield record


class _Reader:
    """Offsets into one text, with line/column look-up."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer(r"\r\n|\n|\r", text)]

    def where(self, offset: int) -> Where:
        line = bisect.bisect_right(self.line_starts, offset) - 1
        return Where(line + 1, offset - self.line_starts[line] + 1)

    def lines(self, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, str]]:
        """``(offset, text)`` of each line starting in ``[start, stop)``, without its break."""
        starts = self.line_starts
        first = bisect.bisect_left(starts, start)
        for index in range(first, len(starts)):
            begin = starts[index]
            if stop is not None and begin >= stop:
                return
            end = starts[index + 1] if index + 1 < len(starts) else len(self.text)
            yield begin, self.text[begin:end].rstrip("\r\n")

    # -- splitting a file into games ---------------------------------------------------------

    def split_games(self) -> Iterator[tuple[int, int, int]]:
        """``(start, moves_start, end)`` offsets of each game.

        A game starts at its first tag line; a tag line after a game's moves (or after a blank
        line following its tags) starts the next game. Comments may span lines.
        """
        games: list[list[int]] = []  # [start, moves_start, end]
        mode = "between"
        in_comment = False
        for start, line in self.lines():
            stripped = line.strip()
            if in_comment:
                in_comment = _scan_braces(line, True)
                games[-1][2] = start + len(line)
                continue
            is_tag = bool(_TAG_LINE_START.match(line)) or (
                stripped.startswith("[") and mode in ("between", "tags")
            )
            if not stripped:
                if mode == "tags":
                    mode = "gap"
                continue
            if is_tag and mode != "tags":
                games.append([start, start + len(line), start + len(line)])
                mode = "tags"
                continue
            if is_tag:
                games[-1][1] = games[-1][2] = start + len(line)
                continue
            if mode == "between":
                games.append([start, start, start + len(line)])
            elif mode in ("tags", "gap"):
                games[-1][1] = start
            mode = "moves"
            in_comment = _scan_braces(line, False)
            games[-1][2] = start + len(line)
        for start, moves_start, end in games:
            yield start, moves_start, end

    # -- one game ----------------------------------------------------------------------------

    def parse_game(
        self, start: int, moves_start: int, end: int, issues: list[RecordIssue]
    ) -> RawRecord:
        raw = RawRecord(start=self.where(start))
        for line_start, line in self.lines(start, moves_start):
            if line.strip():
                self._parse_tag_line(line_start, line, raw, issues)
        if moves_start < end:
            MoveText(self.text, self.where, raw, issues).read(moves_start, end)
        return raw

    def _parse_tag_line(
        self, line_start: int, line: str, raw: RawRecord, issues: list[RecordIssue]
    ) -> None:
        pos = 0
        n = len(line)

        def skip_blanks(i: int) -> int:
            while i < n and line[i] in " \t":
                i += 1
            return i

        def fail(i: int, message: str) -> None:
            issues.append(self.where(line_start + i).issue(f"bad tag syntax: {message}"))

        pos = skip_blanks(pos)
        while pos < n:
            tag_at = pos
            if line[pos] != "[":
                fail(pos, 'expected [Name "value"]')
                return
            pos = skip_blanks(pos + 1)
            name_match = _TAG_NAME.match(line, pos)
            if name_match is None:
                fail(pos, "expected a tag name (a letter, then letters, digits or _)")
                return
            name = name_match.group()
            pos = name_match.end()
            after_name = pos
            pos = skip_blanks(pos)
            if pos >= n or line[pos] != '"':
                what = (
                    "a blank" if pos == after_name and pos < n and line[pos] != '"' else "a quote"
                )
                fail(pos, f"expected {what} then the quoted value of {name}")
                return
            value_at = pos + 1
            pos += 1
            while pos < n and line[pos] != '"':
                pos += 2 if line[pos] == "\\" else 1
            if pos >= n:
                fail(value_at - 1, f"the value of {name} has no closing quote")
                return
            value = unescape(line[value_at:pos], controls=True)
            pos = skip_blanks(pos + 1)
            if pos >= n or line[pos] != "]":
                fail(pos, f"expected ] to close tag {name}")
                return
            raw.tags.append(
                RawTag(
                    name, value, self.where(line_start + tag_at), self.where(line_start + value_at)
                )
            )
            pos = skip_blanks(pos + 1)


def _scan_braces(line: str, in_comment: bool) -> bool:
    """Whether a comment is still open at the end of ``line``."""
    i = 0
    while i < len(line):
        char = line[i]
        if in_comment:
            if char == "\\":
                i += 1
            elif char == "}":
                in_comment = False
        elif char == "{":
            in_comment = True
        i += 1
    return in_comment


__all__ = ["iter_records", "read_record", "read_records", "write_record", "write_records"]
