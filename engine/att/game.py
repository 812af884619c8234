"""The rules object of Asymmetric Tetris Tactics: parameters, seats, long move text."""

from __future__ import annotations

from collections.abc import Mapping

from engine.att import notation
from engine.att.moves import COLUMNS, AttMove, Choice, Drop
from engine.att.pieces import shape
from engine.att.state import AttState, state_from_string
from engine.errors import NotationError
from engine.game import Game

#: Defaults chosen by playtesting (see docs/att.md).
DEFAULT_MAX_PLACER_TURNS = 50
DEFAULT_MAX_ROWS = 10


class AsymmetricTetrisTactics(Game[AttMove]):
    """Asymmetric Tetris Tactics: the chooser names pieces, the placer drops them.

    ``max_placer_turns`` (N) and ``max_rows`` (M) end the game in the placer's favour when
    reached; 0 switches that ending off. ``width`` (4 to 10, the notation has 10 column
    letters) and ``height`` (4 to 99) size the well.
    """

    name = "att"
    title = "Asymmetric Tetris Tactics"
    seat_names = ("CHOOSER", "PLACER")

    def __init__(
        self,
        max_placer_turns: int = DEFAULT_MAX_PLACER_TURNS,
        max_rows: int = DEFAULT_MAX_ROWS,
        width: int = 10,
        height: int = 20,
    ) -> None:
        for label, value in (("max_placer_turns", max_placer_turns), ("max_rows", max_rows)):
            if not isinstance(value, int) or value < 0:
                raise ValueError(
                    f"{label} must be a whole number >= 0 (0 = no limit), not {value!r}"
                )
        if not isinstance(width, int) or not 4 <= width <= len(COLUMNS):
            raise ValueError(f"width must be 4 to {len(COLUMNS)}, not {width!r}")
        if not isinstance(height, int) or not 4 <= height <= 99:
            raise ValueError(f"height must be 4 to 99, not {height!r}")
        self.max_placer_turns = max_placer_turns
        self.max_rows = max_rows
        self.width = width
        self.height = height

    @property
    def params(self) -> Mapping[str, int]:
        return {
            "max_placer_turns": self.max_placer_turns,
            "max_rows": self.max_rows,
            "width": self.width,
            "height": self.height,
        }

    def new_state(self) -> AttState:
        return AttState(self)

    def state_from_setup(self, setup: str | notation.Setup) -> AttState:
        """The chooser to move on a well laid out in Tetris-System set-up notation."""
        if isinstance(setup, str):
            setup = notation.parse_setup(setup)
        return AttState(self, setup.rows(self.width, self.height))

    def state_from_string(self, text: str) -> AttState:
        return state_from_string(self, text)

    def move_to_text(self, move: AttMove) -> str:
        if isinstance(move, (Choice, Drop)):
            return str(move)
        raise TypeError(f"{move!r} is not an ATT move")

    def move_from_text(self, text: str) -> AttMove:
        stripped = text.strip()
        if len(stripped) == 1 and stripped in "IJLOSTZ":
            return Choice(stripped)
        triad = notation.parse_triad(stripped)
        if triad.row is None:
            raise NotationError(text, "the long form of a placement ends with its row, e.g. T1c5")
        if triad.clearance is not None or triad.annotation is not None:
            raise NotationError(text, "the long form carries no clearance or annotation marks")
        if triad.column >= self.width:
            raise NotationError(
                text, f"column {COLUMNS[triad.column]} is off a {self.width}-column well"
            )
        if triad.row > self.height:
            raise NotationError(text, f"row {triad.row} is off a {self.height}-row well")
        return triad.drop()

    def cells(self, move: Drop) -> tuple[int, ...]:
        """The cell indices (``row * width + column``, top row 0) a drop covers, ascending.

        Raises ``ValueError`` when part of the piece would be off the board.
        """
        s = shape(move.piece, move.orientation)
        top = self.height - move.row - s.anchor_row
        if top < 0 or top + s.height > self.height or move.column + s.width > self.width:
            raise ValueError(f"{move} is off the {self.width}x{self.height} board")
        return tuple(sorted((top + r) * self.width + move.column + c for r, c in s.cells))

    def drop_at(self, piece: str, cells: tuple[int, ...] | list[int]) -> Drop:
        """The drop of ``piece`` covering exactly ``cells``; ``ValueError`` if none does."""
        want = tuple(sorted(cells))
        rows = [i // self.width for i in want]
        cols = [i % self.width for i in want]
        left = min(cols)
        for orientation in range(4):
            s = shape(piece, orientation)
            anchor_top = max(r for r, c in zip(rows, cols, strict=True) if c == left)
            move = Drop(piece, s.orientation, left, self.height - anchor_top)
            try:
                if self.cells(move) == want:
                    return move
            except ValueError:
                continue
        raise ValueError(f"cells {list(want)} are not a {piece}")

    def __repr__(self) -> str:
        return (
            f"AsymmetricTetrisTactics(max_placer_turns={self.max_placer_turns}, "
            f"max_rows={self.max_rows}, width={self.width}, height={self.height})"
        )
