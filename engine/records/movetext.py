"""The move text of one game in a record file: move numbers, moves with their clearance marks,
annotations (suffixes, bracketed glyphs, ``$n``), brace comments, and the closing result."""

from __future__ import annotations

import re
from collections.abc import Callable

from engine.errors import RecordIssue
from engine.records.build import RawMove, RawRecord, Where
from engine.records.comment import comment_details
from engine.records.model import ANNOTATIONS, NAG_TO_ANNOTATION
from engine.records.tags import unescape

_RESULT_TOKEN = re.compile(r"(1-0|0-1|1/2-1/2|\*)(?=[\s{]|\Z)")
_NAG = re.compile(r"\$(\d+)")
_MOVE_NUMBER = re.compile(r"(\d+)\.(\.\.)?")
# Longest first, so that "!!" is not read as "!" twice.
_SUFFIXES = sorted(ANNOTATIONS, key=len, reverse=True)


class MoveText:
    """Reads one game's move text into its raw record, appending every problem to ``issues``."""

    def __init__(
        self, text: str, where: Callable[[int], Where], raw: RawRecord, issues: list[RecordIssue]
    ) -> None:
        self.text = text
        self.where = where
        self.raw = raw
        self.issues = issues
        self.pending_number: tuple[int, bool, Where] | None = None
        # The move that comments, annotations and clearance marks attach to, and whether
        # a parenthesised group may still extend its text.
        self.current: RawMove | None = None
        self.extendable = False

    def read(self, start: int, end: int) -> None:
        """Read ``text[start:end]``; stops at a problem that leaves the rest unreadable."""
        text = self.text
        i = start
        while i < end:
            char = text[i]
            if char.isspace():
                i += 1
                continue
            if self.raw.result is not None:
                self._issue(i, "text after the result")
                return
            if char == "{":
                close = _find_comment_end(text, i + 1, end)
                if close is None:
                    self._issue(i, "comment has no closing }")
                    return
                self._attach_comment(i, close)
                self.extendable = False
                i = close + 1
            elif char == "}":
                self._issue(i, "} without an opening {")
                i += 1
            elif char == "$":
                i = self._glyph(i)
            else:
                i = self._token(i, end)
        if self.pending_number is not None:
            self.issues.append(self.pending_number[2].issue("move number without a move"))

    def _issue(self, offset: int, message: str) -> None:
        self.issues.append(self.where(offset).issue(message))

    def _glyph(self, i: int) -> int:
        """A ``$n`` annotation glyph at ``i``; returns where it ends."""
        match = _NAG.match(self.text, i)
        nag = int(match.group(1)) if match else None
        if nag not in NAG_TO_ANNOTATION:
            self._issue(i, "annotation glyph must be $1 to $6")
        else:
            self._annotate(self.current, NAG_TO_ANNOTATION[nag], i)  # type: ignore[index]
        self.extendable = False
        return match.end() if match else i + 1

    def _token(self, i: int, end: int) -> int:
        """The result, a move number, a bracketed group or a move at ``i``; returns its end."""
        text = self.text
        result = _RESULT_TOKEN.match(text, i)
        if result is not None and result.end() <= end:
            self.raw.result = (result.group(1), self.where(i))
            return result.end()
        number = _MOVE_NUMBER.match(text, i)
        if number is not None:
            if self.pending_number is not None:
                self._issue(i, "two move numbers in a row")
            self.pending_number = (int(number.group(1)), bool(number.group(2)), self.where(i))
            self.extendable = False
            return number.end()
        token_end, unclosed = _token_end(text, i, end)
        token = re.sub(r"\s+", " ", text[i:token_end])
        if unclosed:
            self._issue(i, f"unclosed bracket in {token!r}")
        body, annotation = _split_annotation(token)
        if text[i] == "(" and body.startswith("(") and body.endswith(")"):
            self._group(body, annotation, token, i)
        elif not body:
            assert annotation is not None
            self._annotate(self.current, annotation, i)
            self.extendable = False
        else:
            self.current = RawMove(body, self.where(i), number=self.pending_number)
            self.pending_number = None
            self.raw.moves.append(self.current)
            self.extendable = annotation is None
            if annotation is not None:
                self._annotate(self.current, annotation, i)
        return token_end

    def _group(self, body: str, annotation: str | None, token: str, i: int) -> None:
        """A parenthesised group: a bracketed annotation, or a clearance mark of the move."""
        inner = body[1:-1].strip()
        if inner in ANNOTATIONS and annotation is None:
            self._annotate(self.current, inner, i)
        elif self.current is not None and self.extendable:
            # A clearance mark such as "(XX)" belongs to the move before it.
            self.current.text += " " + body
            if annotation is not None:
                self._annotate(self.current, annotation, i)
        else:
            self._issue(i, f"unexpected {token!r}: not after a move")

    def _annotate(self, move: RawMove | None, annotation: str, offset: int) -> None:
        if move is None:
            self._issue(offset, f"annotation {annotation} before any move")
        elif move.annotation is not None:
            self._issue(offset, f"second annotation for {move.text}")
        else:
            move.annotation = annotation

    def _attach_comment(self, open_at: int, close_at: int) -> None:
        move, raw = self.current, self.raw
        body_start = open_at + 1
        body = self.text[body_start:close_at]
        if move is None:
            if raw.comment or raw.moves:
                self._issue(open_at, "a second comment before the first move")
                return
            tokens = list(re.finditer(r"\S+", body))
            if tokens and tokens[0].group() == "|":
                body = body[tokens[0].end() :]
            raw.comment = unescape(body).strip()
            return
        if move.details:
            self._issue(open_at, f"a second comment for move {move.text}")
            return
        move.details, problems = comment_details(body)
        self.issues.extend(self.where(body_start + at).issue(message) for at, message in problems)
        if not move.details:
            move.details = {"comment": ""}


def _split_annotation(token: str) -> tuple[str, str | None]:
    for suffix in _SUFFIXES:
        if token.endswith(suffix):
            return token[: -len(suffix)].rstrip(), suffix
    return token, None


def _token_end(text: str, i: int, end: int) -> tuple[int, bool]:
    """End of a move token: up to a blank or brace outside brackets; brackets may hold blanks."""
    depth = 0
    while i < end:
        char = text[i]
        if char in "([":
            depth += 1
        elif char in ")]":
            depth = max(0, depth - 1)
        elif char in "{}" or (char.isspace() and depth == 0):
            break
        i += 1
    return i, depth > 0


def _find_comment_end(text: str, i: int, end: int) -> int | None:
    while i < end:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "}":
            return i
        i += 1
    return None
