"""A position of Asymmetric Tetris Tactics, with apply/undo, notation and rendering."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Self

from engine.att import notation
from engine.att.boardtext import board_from_string, board_to_string
from engine.att.legal import LegalMoveView, Rests
from engine.att.moves import COLUMNS, AttMove, Choice, Drop
from engine.att.pieces import PIECES, SHAPES, Shape, shape
from engine.att.search import Path, Rows, first_filled_row, geometry, rest_masks, witness
from engine.errors import IllegalMoveError, PositionError
from engine.game import State
from engine.outcome import Outcome, Termination

if TYPE_CHECKING:
    from engine.att.game import AsymmetricTetrisTactics

CHOOSER = 0
PLACER = 1

_CHOOSER_WINS = (Termination.TOP_ROW, Termination.NO_ENTRY)
_ATT_ENDINGS = (
    Termination.TOP_ROW,
    Termination.REPETITION,
    Termination.TURNS_SURVIVED,
    Termination.ROWS_CLEARED,
    Termination.FOUR_ROWS,
    Termination.NO_ENTRY,
)


def _winner(termination: Termination) -> int:
    return CHOOSER if termination in _CHOOSER_WINS else PLACER


@cache
def _zobrist_keys(cells: int) -> tuple[int, ...]:
    # splitmix64: fixed, reproducible keys (cells, then "chooser to move", then one per piece).
    keys = []
    x = 0x5EED_A77A_5EED_A77A
    for _ in range(cells + 1 + len(PIECES)):
        x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        keys.append(z ^ (z >> 31))
    return tuple(keys)


@dataclass(frozen=True, slots=True)
class _Undo:
    move: AttMove
    rows: Rows
    pending: str | None
    turns: int
    cleared: int
    outcome: Outcome | None
    seen: Rows | None


class AttState(State[AttMove]):
    """One ATT position: the well, whose turn it is, the pending piece and the counters."""

    game: AsymmetricTetrisTactics

    def __init__(
        self,
        game: AsymmetricTetrisTactics,
        rows: Rows | None = None,
        pending: str | None = None,
        turns: int = 0,
        cleared: int = 0,
        outcome: Outcome | None = None,
    ) -> None:
        self.game = game
        self._width = game.width
        self._height = game.height
        self._geo = geometry(game.width, game.height)
        self._rows: Rows = rows if rows is not None else (0,) * game.height
        self._pending = pending
        self._turns = turns
        self._cleared = cleared
        self._outcome = outcome
        # Boards left at the end of placer turns, for the repetition rule. A state made from a
        # string only knows the current board (if a placer turn produced it).
        self._seen: dict[Rows, int] = {self._rows: 1} if turns > 0 else {}
        self._stack: list[_Undo] = []
        self._rests: Rests | None = None
        self._zobrist: int | None = None

    # -- the contract --------------------------------------------------------------------

    @property
    def to_move(self) -> int:
        return CHOOSER if self._pending is None else PLACER

    @property
    def ply(self) -> int:
        return 2 * self._turns + (0 if self._pending is None else 1)

    @property
    def rows(self) -> Rows:
        """The well as row bitmasks, top row first (bit ``c`` = column ``c``)."""
        return self._rows

    @property
    def pending(self) -> str | None:
        """The piece the placer must place, or ``None`` on the chooser's turn."""
        return self._pending

    @property
    def placer_turns(self) -> int:
        """Placer turns completed."""
        return self._turns

    @property
    def rows_cleared(self) -> int:
        """Rows removed so far, in all."""
        return self._cleared

    @property
    def legal_moves(self) -> LegalMoveView:
        if self.outcome() is not None:
            return LegalMoveView(False, None)
        if self._pending is None:
            return LegalMoveView(True, None)
        return LegalMoveView(False, self.rests())

    def rests(self) -> Rests:
        """The placer's reachable resting positions (empty on the chooser's turn)."""
        if self._rests is None:
            table: dict[tuple[int, int], int] = {}
            if self._pending is not None:
                top = first_filled_row(self._rows)
                for s in SHAPES[self._pending]:
                    for r, mask in rest_masks(self._geo, self._rows, s, top):
                        table[s.orientation, r] = mask
            self._rests = Rests(self._pending or "I", self._height, table)
        return self._rests

    def witness(self, move: Drop) -> Path:
        """A slide/drop path that brings the pending piece to ``move``; raises if unreachable."""
        self.check(move)
        s = shape(move.piece, move.orientation)
        path = witness(self._geo, self._rows, s, self._top_of(move, s), move.column)
        if path is None:  # pragma: no cover - check() has just found it reachable
            raise AssertionError("search and witness disagree")
        return path

    def cells(self, move: Drop) -> tuple[int, ...]:
        """The four cell indices (``row * width + column``, top row 0) of a drop."""
        return self.game.cells(move)

    def check(self, move: AttMove) -> None:
        text = self._text(move)
        if self.outcome() is not None:
            raise IllegalMoveError(text, "game_over", "the game is over")
        if isinstance(move, Choice):
            if self._pending is not None:
                raise IllegalMoveError(
                    text, "not_your_turn", f"the placer must place {self._pending} first"
                )
            return
        if not isinstance(move, Drop):
            raise IllegalMoveError(text, "not_a_move", f"{move!r} is not an ATT move")
        if self._pending is None:
            raise IllegalMoveError(text, "not_your_turn", "the chooser must name a piece first")
        if move.piece != self._pending:
            raise IllegalMoveError(
                text, "wrong_piece", f"the piece to place is {self._pending}, not {move.piece}"
            )
        if move in self.rests():
            return
        s = shape(move.piece, move.orientation)
        top = self._top_of(move, s)
        if top < 0 or top + s.height > self._height or move.column + s.width > self._width:
            raise IllegalMoveError(text, "off_board", f"{move} does not fit on the board")
        for i, mask in enumerate(s.row_masks):
            if self._rows[top + i] & (mask << move.column):
                raise IllegalMoveError(text, "occupied", f"{move} overlaps blocks in the well")
        raise IllegalMoveError(
            text, "not_reachable", f"no entry, slides and drops bring {move.triad} to rest there"
        )

    def apply(self, move: AttMove) -> None:
        self.check(move)
        if isinstance(move, Choice):
            self._push(move, None)
            self._pending = move.piece
        else:
            rows, cleared = self._placed(move)
            seen = rows
            self._push(move, seen)
            self._rows = rows
            self._pending = None
            self._turns += 1
            self._cleared += cleared
            self._seen[rows] = self._seen.get(rows, 0) + 1
            self._outcome = self._after_placer(cleared, self._seen[rows] > 1)
        self._rests = None
        self._zobrist = None

    def undo(self) -> AttMove:
        if not self._stack:
            raise IndexError("no move to undo")
        record = self._stack.pop()
        if record.seen is not None:
            count = self._seen[record.seen] - 1
            if count:
                self._seen[record.seen] = count
            else:
                del self._seen[record.seen]
        self._rows = record.rows
        self._pending = record.pending
        self._turns = record.turns
        self._cleared = record.cleared
        self._outcome = record.outcome
        self._rests = None
        self._zobrist = None
        return record.move

    def copy(self) -> Self:
        other = type(self).__new__(type(self))
        other.__dict__.update(self.__dict__)
        other._seen = dict(self._seen)
        other._stack = list(self._stack)
        return other

    def outcome(self) -> Outcome | None:
        if self._outcome is not None:
            return self._outcome
        if self._pending is not None and self.rests().count == 0:
            return Outcome(Termination.NO_ENTRY, CHOOSER)
        return None

    @property
    def zobrist(self) -> int:
        if self._zobrist is None:
            keys = _zobrist_keys(self._width * self._height)
            cells = self._width * self._height
            h = (
                keys[cells]
                if self._pending is None
                else keys[cells + 1 + PIECES.index(self._pending)]
            )
            for r, row in enumerate(self._rows):
                base = r * self._width
                while row:
                    low = row & -row
                    h ^= keys[base + low.bit_length() - 1]
                    row ^= low
            self._zobrist = h
        return self._zobrist

    def to_string(self) -> str:
        side = "C" if self._pending is None else f"P:{self._pending}"
        parts = [
            board_to_string(self._rows, self._width),
            side,
            str(self._turns),
            str(self._cleared),
        ]
        over = self.outcome()
        if over is not None:
            parts.append(over.termination.value)
        return " ".join(parts)

    def san(self, move: AttMove) -> str:
        return notation.san(self, move)

    def parse_san(self, text: str) -> AttMove:
        return notation.resolve(self, text)

    def grid(self) -> list[str]:
        return [
            "".join("#" if (row >> c) & 1 else "." for c in range(self._width))
            for row in self._rows
        ]

    def render(self, color: bool = False) -> str:
        block = "\x1b[46m#\x1b[0m" if color else "#"
        lines = []
        edge = "   +" + "-" * self._width + "+"
        lines.append(edge)
        for r, text in enumerate(self.grid()):
            number = self._height - r
            lines.append(f"{number:>2} |" + text.replace("#", block) + "|")
        lines.append(edge)
        lines.append("    " + COLUMNS[: self._width])
        lines.append(self._status())
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<AttState {self.to_string()!r}>"

    @property
    def history(self) -> tuple[AttMove, ...]:
        return tuple(record.move for record in self._stack)

    # -- helpers -------------------------------------------------------------------------

    def placed(self, move: Drop) -> tuple[Rows, int]:
        """The well after ``move`` (assumed legal) and its removals, and how many rows went."""
        return self._placed(move)

    def _placed(self, move: Drop) -> tuple[Rows, int]:
        s = shape(move.piece, move.orientation)
        top = self._top_of(move, s)
        rows = list(self._rows)
        for i, mask in enumerate(s.row_masks):
            rows[top + i] |= mask << move.column
        full = self._geo.full
        kept = [row for row in rows if row != full]
        cleared = self._height - len(kept)
        if cleared:
            kept[:0] = [0] * cleared
        return tuple(kept), cleared

    def _top_of(self, move: Drop, s: Shape) -> int:
        return self._height - move.row - s.anchor_row

    def _push(self, move: AttMove, seen: Rows | None) -> None:
        self._stack.append(
            _Undo(move, self._rows, self._pending, self._turns, self._cleared, self._outcome, seen)
        )

    def _after_placer(self, cleared: int, repeated: bool) -> Outcome | None:
        game = self.game
        if self._rows[0]:
            return Outcome(Termination.TOP_ROW, CHOOSER)
        if cleared >= 4:
            return Outcome(Termination.FOUR_ROWS, PLACER)
        if repeated:
            return Outcome(Termination.REPETITION, PLACER)
        if game.max_rows and self._cleared >= game.max_rows:
            return Outcome(Termination.ROWS_CLEARED, PLACER)
        if game.max_placer_turns and self._turns >= game.max_placer_turns:
            return Outcome(Termination.TURNS_SURVIVED, PLACER)
        return None

    def _text(self, move: object) -> str:
        if isinstance(move, (Choice, Drop)):
            return str(move)
        return repr(move)

    def _status(self) -> str:
        over = self.outcome()
        game = self.game
        turns = f"{self._turns}/{game.max_placer_turns or '-'}"
        rows = f"{self._cleared}/{game.max_rows or '-'}"
        if over is not None:
            who = game.seat_names[over.winner] if over.winner is not None else "nobody"
            head = f"{who} wins ({over.termination.value})"
        elif self._pending is None:
            head = "CHOOSER to choose"
        else:
            head = f"PLACER to place {self._pending}"
        return f"{head}; placer turns {turns}, rows cleared {rows}"


def state_from_string(game: AsymmetricTetrisTactics, text: str) -> AttState:
    """Read :meth:`AttState.to_string` back."""
    fields = text.split()
    if len(fields) not in (4, 5):
        raise PositionError(
            f"an ATT position has 4 or 5 fields (board side turns rows [ending]), got {text!r}"
        )
    rows = board_from_string(fields[0], game.width, game.height)
    side = fields[1]
    pending: str | None
    if side == "C":
        pending = None
    elif len(side) == 3 and side.startswith("P:") and side[2] in PIECES:
        pending = side[2]
    else:
        raise PositionError(f"side to move must be C or P:<piece>, not {side!r}")
    try:
        turns, cleared = int(fields[2]), int(fields[3])
    except ValueError:
        raise PositionError(f"turn and row counters must be numbers: {text!r}") from None
    if turns < 0 or cleared < 0:
        raise PositionError(f"counters cannot be negative: {text!r}")
    outcome = None
    if len(fields) == 5:
        try:
            termination = Termination(fields[4])
        except ValueError:
            raise PositionError(f"unknown ending {fields[4]!r}") from None
        if termination not in _ATT_ENDINGS:
            raise PositionError(f"{termination.value!r} is not an ATT ending")
        outcome = Outcome(termination, _winner(termination))
    state = AttState(game, rows, pending, turns, cleared, None)
    if outcome is None:
        if pending is None and turns > 0:
            # The endings that the board and counters show by themselves.
            state._outcome = state._after_placer(0, False)
    elif outcome.termination == Termination.NO_ENTRY:
        if pending is None or state.outcome() is None:
            raise PositionError("the position says the placer has no entry, but it has one")
    else:
        state._outcome = outcome
    return state
