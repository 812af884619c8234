"""Vectors, directions and board coordinates on the 11x11 torus."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any

from referee.game.constants import BOARD_N


@dataclass(frozen=True, slots=True, order=True)
class Vector2:
    """A 2-D integer vector ``(r, c)``: row first, then column."""

    r: int
    c: int

    def __add__(self, other: Any) -> Vector2:
        step = _components(other)
        if step is None:
            return NotImplemented
        return Vector2(self.r + step[0], self.c + step[1])

    def __sub__(self, other: Any) -> Vector2:
        step = _components(other)
        if step is None:
            return NotImplemented
        return Vector2(self.r - step[0], self.c - step[1])

    def __neg__(self) -> Vector2:
        return Vector2(-self.r, -self.c)

    def __mul__(self, n: int) -> Vector2:
        return Vector2(self.r * n, self.c * n)

    __rmul__ = __mul__

    def __iter__(self) -> Iterator[int]:
        yield self.r
        yield self.c

    def __str__(self) -> str:
        return f"Vector2({self.r}, {self.c})"

    def down(self, n: int = 1) -> Vector2:
        return self + Vector2(n, 0)

    def up(self, n: int = 1) -> Vector2:
        return self + Vector2(-n, 0)

    def left(self, n: int = 1) -> Vector2:
        return self + Vector2(0, -n)

    def right(self, n: int = 1) -> Vector2:
        return self + Vector2(0, n)


def _components(other: object) -> tuple[int, int] | None:
    """The ``(dr, dc)`` of a vector or direction, or ``None`` for anything else."""
    if isinstance(other, Direction):
        other = other.value
    if isinstance(other, Vector2):
        return other.r, other.c
    return None


class Direction(Enum):
    """The four unit steps on the board. ``Direction((dr, dc))`` looks one up."""

    Down = Vector2(1, 0)
    Up = Vector2(-1, 0)
    Left = Vector2(0, -1)
    Right = Vector2(0, 1)

    @classmethod
    def _missing_(cls, value: object) -> Direction | None:
        if isinstance(value, tuple) and len(value) == 2:
            for member in cls:
                if (member.value.r, member.value.c) == value:
                    return member
        return None

    @property
    def r(self) -> int:
        return int(self.value.r)

    @property
    def c(self) -> int:
        return int(self.value.c)

    def __neg__(self) -> Direction:
        return Direction(-self.value)

    def __mul__(self, n: int) -> Vector2:
        return Vector2(self.r * n, self.c * n)

    __rmul__ = __mul__

    def __iter__(self) -> Iterator[int]:
        return iter(self.value)

    def __str__(self) -> str:
        return {"Down": "[↓]", "Up": "[↑]", "Left": "[←]", "Right": "[→]"}[self.name]


@dataclass(frozen=True, slots=True, order=True)
class Coord(Vector2):
    """A cell of the board. Adding or subtracting a vector wraps around the torus."""

    def __post_init__(self) -> None:
        if not (0 <= self.r < BOARD_N and 0 <= self.c < BOARD_N):
            raise ValueError(f"Coord({self.r}, {self.c}) is outside the {BOARD_N}x{BOARD_N} board")

    def __str__(self) -> str:
        return f"{self.r}-{self.c}"

    def __add__(self, other: Any) -> Coord:
        if isinstance(other, Vector2):  # the common case, without the general look-up
            return _CELLS[((self.r + other.r) % BOARD_N) * BOARD_N + (self.c + other.c) % BOARD_N]
        step = _components(other)
        if step is None:
            return NotImplemented
        return _CELLS[((self.r + step[0]) % BOARD_N) * BOARD_N + (self.c + step[1]) % BOARD_N]

    def __sub__(self, other: Any) -> Coord:
        if isinstance(other, Vector2):  # the common case, without the general look-up
            return _CELLS[((self.r - other.r) % BOARD_N) * BOARD_N + (self.c - other.c) % BOARD_N]
        step = _components(other)
        if step is None:
            return NotImplemented
        return _CELLS[((self.r - step[0]) % BOARD_N) * BOARD_N + (self.c - step[1]) % BOARD_N]


# Arithmetic hands out these shared instances: dict and set lookups of the same object skip
# the (Python-level) dataclass __eq__, which dominates the search loops of course bots.
_CELLS: tuple[Coord, ...] = tuple(Coord(r, c) for r in range(BOARD_N) for c in range(BOARD_N))
