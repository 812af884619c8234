"""Tetris-System notation (Higgins & Hwang, 2012) for Asymmetric Tetris Tactics.

Two layers, as in chess SAN:

* syntax, no board needed: :func:`parse_triad` / :func:`format_triad` (a :class:`Triad`),
  :func:`parse_moves` (a list of triads), :func:`parse_setup` / :func:`format_setup`
  (bracketed runs such as ``[3, (2)] [(1), 4]``); errors are :class:`NotationError`;
* resolution in a position: :func:`resolve` turns text into a legal move or raises
  ``NotationError``, ``IllegalMoveError`` or ``AmbiguousMoveError``; :func:`san` writes a legal
  move canonically (row only when needed, clearance mark when rows go).

A triad is the piece, its orientation (clockwise quarter turns from the letter's shape;
omitted when 0) and the column of its *anchor*, the lowest square of its leftmost column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.att.moves import COLUMNS, AttMove, Choice, Drop
from engine.att.pieces import PIECES, canonical_orientation
from engine.errors import AmbiguousMoveError, IllegalMoveError, NotationError, PositionError

if TYPE_CHECKING:
    from engine.att.search import Rows
    from engine.att.state import AttState

#: Clearance marks by rows removed.
CLEARANCE_MARKS = {1: "X", 2: "XX", 3: "XXX", 4: "T"}
_MARK_ROWS = {mark: rows for rows, mark in CLEARANCE_MARKS.items()}
#: Annotation glyphs and their meaning.
ANNOTATIONS = {
    "??": "blunder",
    "?": "mistake",
    "?!": "dubious move",
    "!?": "interesting move",
    "!": "good move",
    "!!": "brilliant move",
}
_SUBSCRIPTS = {"₀": "0", "₁": "1", "₂": "2", "₃": "3", "₄": "4", "₅": "5", "₆": "6", "₇": "7",
               "₈": "8", "₉": "9"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Triad:
    """A placement as written: piece, orientation, anchor column, and optional extras.

    ``column`` is 0-based (``a`` = 0); ``row`` is 1-based from the bottom, or ``None`` when not
    written; ``clearance`` is the number of rows the mark claims (``None``: no mark).
    """

    piece: str
    orientation: int = 0
    column: int = 0
    row: int | None = None
    clearance: int | None = None
    annotation: str | None = None

    def drop(self) -> Drop:
        """The move this triad names exactly (it must carry a row)."""
        if self.row is None:
            raise ValueError(f"{format_triad(self)} has no row; resolve it in a position")
        return Drop(self.piece, self.orientation, self.column, self.row)

    def __str__(self) -> str:
        return format_triad(self)


def format_triad(triad: Triad) -> str:
    """Canonical text: ``T1c``, ``T1c5``, ``Od (XX)``, ``J1a (!?)``, ``Ta (X) (??)``."""
    text = triad.piece
    if triad.orientation:
        text += str(triad.orientation)
    text += COLUMNS[triad.column]
    if triad.row is not None:
        text += str(triad.row)
    if triad.clearance:
        text += f" ({CLEARANCE_MARKS[triad.clearance]})"
    if triad.annotation is not None:
        text += f" ({triad.annotation})"
    return text


def _fail(text: str, message: str, column: int | None) -> NotationError:
    return NotationError(text, message, column)


def parse_triad(text: str, *, _offset: int = 0, _whole: str | None = None) -> Triad:
    """Parse one triad with its marks; accepts ``J1a``, ``J₁a``, ``L_{3c}``, ``L_3c``, ``Tc5``,
    ``Od (XX)``, ``Od(XX)!?``. Raises :class:`NotationError` saying where it went wrong."""
    scan = _TriadScan(text, _offset, text if _whole is None else _whole)
    piece = scan.piece()
    scan.take("_")
    brace = scan.take("{")
    orientation = scan.orientation()
    if brace and scan.take("}"):
        brace = False
    column = scan.column()
    row = scan.row()
    if brace and not scan.take("}"):
        raise scan.err("missing '}'", scan.i)
    clearance, annotation = scan.marks()
    return Triad(piece, orientation, column, row, clearance, annotation)


class _TriadScan:
    """A reading position in one triad's text; each step reads one part and moves past it."""

    __slots__ = ("_offset", "_whole", "i", "n", "s")

    def __init__(self, text: str, offset: int, whole: str) -> None:
        self.s = text
        self.n = len(text)
        self.i = 0
        self._offset = offset
        self._whole = whole

    def err(self, message: str, at: int) -> NotationError:
        """The error for ``message`` at ``at`` in this text, placed in the whole input."""
        return _fail(self._whole, message, self._offset + at)

    def take(self, char: str) -> bool:
        """Move past ``char`` if it comes next."""
        if self.i < self.n and self.s[self.i] == char:
            self.i += 1
            return True
        return False

    def piece(self) -> str:
        """The piece letter, after any leading blanks."""
        s, n = self.s, self.n
        while self.i < n and s[self.i].isspace():
            self.i += 1
        if self.i >= n:
            raise self.err("empty move; a triad starts with a piece letter I J L O S T Z", self.i)
        if s[self.i] not in PIECES:
            hint = " (pieces are capitals)" if s[self.i].upper() in PIECES else ""
            raise self.err(f"{s[self.i]!r} is not a piece; pieces are I J L O S T Z{hint}", self.i)
        self.i += 1
        return s[self.i - 1]

    def orientation(self) -> int:
        """The quarter turns, a digit or a subscript digit; 0 when not written."""
        s, i = self.s, self.i
        if not (i < self.n and (s[i].isdigit() or s[i] in _SUBSCRIPTS)):
            return 0
        digit = _SUBSCRIPTS.get(s[i], s[i])
        if digit not in "0123":
            raise self.err(f"orientation {digit} is not 0 to 3 quarter turns", i)
        self.i += 1
        return int(digit)

    def column(self) -> int:
        """The anchor's column letter."""
        s, i = self.s, self.i
        if i >= self.n:
            raise self.err("missing column letter (a b c d e f g h k m)", i)
        if s[i] not in COLUMNS:
            why = "columns are a b c d e f g h k m"
            if s[i] in "ijl":
                why = "i, j and l are not columns"
            raise self.err(f"{s[i]!r} is not a column: {why}", i)
        self.i += 1
        return COLUMNS.index(s[i])

    def row(self) -> int | None:
        """The anchor's row number, or ``None`` when not written."""
        s, start = self.s, self.i
        while self.i < self.n and s[self.i].isdigit():
            self.i += 1
        if self.i == start:
            return None
        if s[start] == "0":
            raise self.err("rows are numbered from 1 and written without leading zeros", start)
        return int(s[start : self.i])

    def marks(self) -> tuple[int | None, str | None]:
        """The clearance mark and the annotation after the triad, each at most once."""
        clearance: int | None = None
        annotation: str | None = None
        while self.i < self.n:
            if self.s[self.i].isspace():
                self.i += 1
                continue
            at = self.i
            inner = self._mark()
            if inner in _MARK_ROWS:
                if clearance is not None:
                    raise self.err("a second clearance mark", at)
                clearance = _MARK_ROWS[inner]
            elif inner in ANNOTATIONS:
                if annotation is not None:
                    raise self.err("a second annotation", at)
                annotation = inner
            elif inner and set(inner) == {"X"}:
                raise self.err("four rows at once are marked (T), and at most four rows go", at)
            else:
                raise self.err(
                    f"unknown mark {inner!r}: clearance is (X) (XX) (XXX) (T); "
                    "annotations are ?? ? ?! !? ! !!",
                    at,
                )
        return clearance, annotation

    def _mark(self) -> str:
        """One mark's text: what a pair of brackets holds, or a bare run of ``?`` and ``!``."""
        s, at = self.s, self.i
        if s[at] == "(":
            close = s.find(")", at)
            if close < 0:
                raise self.err("missing ')'", at)
            self.i = close + 1
            return s[at + 1 : close].strip()
        while self.i < self.n and s[self.i] in "?!":
            self.i += 1
        if self.i == at:
            raise self.err(f"unexpected {s[at]!r} after the triad", at)
        return s[at : self.i]


def parse_moves(text: str) -> list[Triad]:
    """A sequence of triads separated by commas, slashes or spaces, e.g. ``Od (XX), J1a, Zc``."""
    triads: list[Triad] = []
    chunk_start: int | None = None
    i = 0
    n = len(text)

    def flush(end: int) -> None:
        nonlocal chunk_start
        if chunk_start is not None:
            triads.append(parse_triad(text[chunk_start:end], _offset=chunk_start, _whole=text))
            chunk_start = None

    while i < n:
        ch = text[i]
        if ch in ",/":
            if chunk_start is None:
                raise _fail(text, f"{ch!r} with no move before it", i)
            flush(i)
            i += 1
        elif ch.isspace():
            i += 1
        elif ch in PIECES and (chunk_start is None or text[i - 1].isspace()):
            # A capital piece letter after a space starts the next triad ((T) is inside parens).
            flush(i)
            chunk_start = i
            i += 1
        elif ch == "(":
            close = text.find(")", i)
            if chunk_start is None:
                raise _fail(text, "a mark with no triad before it", i)
            i = n if close < 0 else close + 1
        else:
            if chunk_start is None:
                chunk_start = i
            i += 1
    flush(n)
    return triads


# -- set-up positions -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Setup:
    """An initial well as bracketed runs: one tuple of ``(filled, length)`` runs per row,
    bottom row first."""

    runs: tuple[tuple[tuple[bool, int], ...], ...]

    def rows(self, width: int, height: int) -> Rows:
        """The well as row bitmasks, top row first; ``PositionError`` if it does not fit."""
        if len(self.runs) > height:
            raise PositionError(f"the set-up has {len(self.runs)} rows; the well has {height}")
        out = [0] * height
        for number, runs in enumerate(self.runs):
            c = 0
            row = 0
            for filled, length in runs:
                if filled:
                    row |= ((1 << length) - 1) << c
                c += length
            if c != width:
                raise PositionError(
                    f"set-up row {number + 1} is {c} cells wide; the well is {width} wide"
                )
            out[height - 1 - number] = row
        return tuple(out)

    def __str__(self) -> str:
        return format_setup(self)


def format_setup(setup: Setup) -> str:
    """``[3, (2)] [(1), 4]``: rows bottom to top, filled runs bare, empty runs in parentheses."""
    return " ".join(
        "[" + ", ".join(str(n) if filled else f"({n})" for filled, n in runs) + "]"
        for runs in setup.runs
    )


def setup_of(rows: Rows, width: int) -> Setup:
    """The set-up of a well (rows top first), up to its highest non-empty row."""
    bottom_up = list(reversed(rows))
    while bottom_up and not bottom_up[-1]:
        bottom_up.pop()
    out = []
    for row in bottom_up:
        runs: list[tuple[bool, int]] = []
        for c in range(width):
            filled = bool((row >> c) & 1)
            if runs and runs[-1][0] == filled:
                runs[-1] = (filled, runs[-1][1] + 1)
            else:
                runs.append((filled, 1))
        out.append(tuple(runs))
    return Setup(tuple(out))


def parse_setup(text: str) -> Setup:
    """Parse bracketed runs; an empty text is the empty well."""
    rows: list[tuple[tuple[bool, int], ...]] = []
    i = 0
    n = len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        if text[i] != "[":
            raise _fail(text, "expected '[' to start a row", i)
        close = text.find("]", i)
        if close < 0:
            raise _fail(text, "missing ']'", i)
        runs: list[tuple[bool, int]] = []
        pos = i + 1
        for item in text[i + 1 : close].split(","):
            lead = len(item) - len(item.lstrip())
            token = item.strip()
            at = pos + lead
            filled = not (token.startswith("(") and token.endswith(")"))
            number = token if filled else token[1:-1].strip()
            if not number.isdigit() or number.startswith("0"):
                raise _fail(text, f"expected a run length like 3 or (2), got {token!r}", at)
            if runs and runs[-1][0] == filled:
                raise _fail(text, "two runs of the same kind in a row; write them as one", at)
            runs.append((filled, int(number)))
            pos += len(item) + 1
        rows.append(tuple(runs))
        i = close + 1
    return Setup(tuple(rows))


# -- resolution in a position -----------------------------------------------------------


def _candidates(state: AttState, orientation: int, column: int, row: int | None) -> list[Drop]:
    found = []
    for move in state.rests():
        if (
            move.orientation == orientation
            and move.column == column
            and (row is None or move.row == row)
        ):
            found.append(move)
    return found


def resolve(state: AttState, text: str | Triad) -> AttMove:
    """The legal move that ``text`` names in ``state``.

    Raises ``NotationError`` (bad syntax), ``IllegalMoveError`` (well formed but not a legal
    move here; ``rule`` says why) or ``AmbiguousMoveError`` (the triad needs its row).
    """
    if isinstance(text, str):
        stripped = text.strip()
        if len(stripped) == 1 and stripped in PIECES:
            move = Choice(stripped)
            state.check(move)
            return move
        triad = parse_triad(text)
        shown = text
    else:
        triad = text
        shown = format_triad(text)
    if state.outcome() is not None:
        raise IllegalMoveError(shown, "game_over", "the game is over")
    if state.pending is None:
        raise IllegalMoveError(
            shown, "not_your_turn", "the chooser names a piece (e.g. T) before a placement"
        )
    if triad.piece != state.pending:
        raise IllegalMoveError(
            shown, "wrong_piece", f"the piece to place is {state.pending}, not {triad.piece}"
        )
    game = state.game
    if triad.column >= game.width or (triad.row is not None and triad.row > game.height):
        raise IllegalMoveError(
            shown, "off_board", f"{shown} is off the {game.width}x{game.height} well"
        )
    orientation = canonical_orientation(triad.piece, triad.orientation)
    found = _candidates(state, orientation, triad.column, triad.row)
    if not found:
        if triad.row is not None:
            state.check(triad.drop())  # raises with the precise rule (off_board, occupied...)
        raise IllegalMoveError(
            shown, "not_reachable", f"no reachable resting position matches {format_triad(triad)}"
        )
    if len(found) > 1:
        raise AmbiguousMoveError(shown, [str(m) for m in sorted(found, key=lambda m: m.row)])
    drop = found[0]
    if triad.clearance is not None:
        _, cleared = state.placed(drop)
        if cleared != triad.clearance:
            said = CLEARANCE_MARKS[triad.clearance]
            raise IllegalMoveError(
                shown, "wrong_clearance", f"{drop.triad} removes {cleared} row(s), not ({said})"
            )
    return drop


def triad_of(state: AttState, move: Drop, annotation: str | None = None) -> Triad:
    """The canonical triad of a legal drop: row only when ambiguous, clearance when rows go."""
    state.check(move)
    same = _candidates(state, move.orientation, move.column, None)
    _, cleared = state.placed(move)
    row = move.row if len(same) > 1 else None
    return Triad(move.piece, move.orientation, move.column, row, cleared or None, annotation)


def san(state: AttState, move: AttMove) -> str:
    """A legal move in Tetris-System notation: ``T`` for a choice, a triad for a drop."""
    if isinstance(move, Choice):
        state.check(move)
        return move.piece
    return format_triad(triad_of(state, move))


def play(state: AttState, text: str) -> list[Drop]:
    """Play a sequence of triads from ``state``, the chooser naming each triad's piece.

    Returns the drops played; the state is left after the last one.
    """
    played = []
    for triad in parse_moves(text):
        if state.pending is None and state.outcome() is None:
            state.apply(Choice(triad.piece))
        move = resolve(state, triad)
        assert isinstance(move, Drop)
        state.apply(move)
        played.append(move)
    return played
