"""The static rules of Tetress: parameters, seats, notation and position strings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.errors import PositionError
from engine.game import Game
from engine.tetress.geometry import COL_MASKS, ROW_MASKS, N
from engine.tetress.placement import Placement
from engine.tetress.state import SEAT_CHARS, TetressState
from engine.tetress.symmetry import canonical_line

TURN_LIMIT = 150


class Tetress(Game[Placement]):
    """Tetress on the 11x11 torus; ``turn_limit`` actions (150 by default) end the game."""

    name = "tetress"
    title = "Tetress"
    seat_names = ("RED", "BLUE")
    board_size = N
    symmetries = "shifted across the torus (it wraps), rotated or mirrored"

    def __init__(self, turn_limit: int = TURN_LIMIT) -> None:
        if turn_limit < 0:
            raise ValueError(f"turn_limit must be >= 0, got {turn_limit}")
        self.turn_limit = turn_limit

    @property
    def params(self) -> Mapping[str, int]:
        return {"turn_limit": self.turn_limit}

    def new_state(self) -> TetressState:
        return TetressState(self)

    def state_from_string(self, text: str) -> TetressState:
        """Read ``rows side ply``: 11 rows of ``.rb`` joined by ``/``, ``r`` or ``b``, actions.

        Raises :class:`~engine.errors.PositionError` when the text is malformed or the
        position impossible (a full row or column, side to move not matching the ply).
        """
        parts = text.split()
        if len(parts) != 3:
            raise PositionError(f"expected 'rows side ply', got {text!r}")
        board, side, ply_text = parts
        rows = board.split("/")
        if len(rows) != N or any(len(row) != N for row in rows):
            raise PositionError(f"expected {N} rows of {N} cells joined by '/', got {board!r}")
        red = blue = 0
        for r, row in enumerate(rows):
            for c, ch in enumerate(row):
                if ch == "r":
                    red |= 1 << (r * N + c)
                elif ch == "b":
                    blue |= 1 << (r * N + c)
                elif ch != ".":
                    raise PositionError(f"bad cell {ch!r} at {r}-{c}; expected '.', 'r' or 'b'")
        side = side.lower()
        if side not in SEAT_CHARS:
            raise PositionError(f"side to move must be 'r' or 'b', got {parts[1]!r}")
        if not (ply_text.isascii() and ply_text.isdigit()):
            raise PositionError(f"ply must be a non-negative integer, got {ply_text!r}")
        ply = int(ply_text)
        if ply > self.turn_limit:
            raise PositionError(f"ply {ply} is past the turn limit {self.turn_limit}")
        if SEAT_CHARS[ply & 1] != side:
            raise PositionError(f"at ply {ply} {self.seat_names[ply & 1]} is to move, not {side!r}")
        occupied = red | blue
        for i, line in enumerate(ROW_MASKS):
            if occupied & line == line:
                raise PositionError(f"row {i} is full; full lines are always removed")
        for i, line in enumerate(COL_MASKS):
            if occupied & line == line:
                raise PositionError(f"column {i} is full; full lines are always removed")
        return TetressState(self, red, blue, ply)

    def canonical_line(self, moves: Sequence[Placement]) -> tuple[Placement, ...]:
        """Up to the torus's translations and the square's rotations and reflections (see
        :mod:`engine.tetress.symmetry`)."""
        return canonical_line(moves)

    def move_to_text(self, move: Placement) -> str:
        return str(move)

    def move_from_text(self, text: str) -> Placement:
        return Placement.parse(text)
