"""Every exception the engine raises, in one place.

    EngineError
    ├── NotationError        text that cannot be parsed at all (a syntax error)
    ├── IllegalMoveError     a well-formed move that breaks a rule; ``rule`` says which
    ├── AmbiguousMoveError   short notation that matches several legal moves
    ├── PositionError        a position string that cannot be parsed or is inconsistent
    ├── RecordError          a game record with errors; ``issues`` lists every one found
    ├── BookError            an openings book that cannot be used (engine.records.openings)
    └── UnknownGameError     a game name that is not registered

All of them are also ``ValueError`` (``UnknownGameError`` is a ``KeyError``), so callers that
only care about "bad input" can catch the builtin.
"""

from __future__ import annotations

from collections.abc import Sequence


class EngineError(Exception):
    """Base class of every error raised by :mod:`engine`."""


class NotationError(EngineError, ValueError):
    """Text that is not valid notation, whatever the position (a syntax error)."""

    def __init__(self, text: str, message: str, column: int | None = None) -> None:
        self.text = text
        self.message = message
        self.column = column
        where = f" at column {column + 1}" if column is not None else ""
        super().__init__(f"invalid notation {text!r}{where}: {message}")


class IllegalMoveError(EngineError, ValueError):
    """A well-formed move that the rules forbid in the current position.

    ``rule`` is a short stable code (for programs); ``detail`` a sentence (for people),
    e.g. ``rule="occupied"``, ``detail="cell 3-4 is occupied"``.
    """

    def __init__(self, move_text: str, rule: str, detail: str) -> None:
        self.move_text = move_text
        self.rule = rule
        self.detail = detail
        super().__init__(f"illegal move {move_text}: {detail}")


class AmbiguousMoveError(EngineError, ValueError):
    """Short notation that matches more than one legal move; ``candidates`` lists them."""

    def __init__(self, text: str, candidates: Sequence[str]) -> None:
        self.text = text
        self.candidates = tuple(candidates)
        super().__init__(f"ambiguous move {text!r}: could be {', '.join(self.candidates)}")


class PositionError(EngineError, ValueError):
    """A position string that cannot be parsed, or describes an impossible position."""


class UnknownGameError(EngineError, KeyError):
    """A game name that is not in the registry."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown game"


class RecordIssue:
    """One problem found in a game record, with its 1-based line and column."""

    __slots__ = ("column", "line", "message")

    def __init__(self, line: int, column: int, message: str) -> None:
        self.line = line
        self.column = column
        self.message = message

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}: {self.message}"

    def __repr__(self) -> str:
        return f"RecordIssue({self.line}, {self.column}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecordIssue) and (self.line, self.column, self.message) == (
            other.line,
            other.column,
            other.message,
        )

    def __hash__(self) -> int:
        return hash((self.line, self.column, self.message))


class BookError(EngineError, ValueError):
    """An openings book that cannot be used (:mod:`engine.records.openings`), with the reason."""


class RecordError(EngineError, ValueError):
    """A game record that could not be read; ``issues`` holds every problem found, in order."""

    def __init__(self, issues: Sequence[RecordIssue]) -> None:
        self.issues = tuple(issues)
        lines = "\n".join(f"  {issue}" for issue in self.issues)
        super().__init__(f"{len(self.issues)} error(s) in game record:\n{lines}")
