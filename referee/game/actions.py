"""The one action of Tetress: placing a tetromino on four cells."""

from __future__ import annotations

from dataclasses import dataclass

from referee.game.coord import Coord


@dataclass(frozen=True, slots=True)
class PlaceAction:
    """Place a tetromino on four cells. ``str()`` keeps the order the cells were given in."""

    c1: Coord
    c2: Coord
    c3: Coord
    c4: Coord

    @property
    def coords(self) -> set[Coord]:
        """The four cells, as a set (order does not matter to the rules)."""
        return {self.c1, self.c2, self.c3, self.c4}

    def __str__(self) -> str:
        return f"PLACE({self.c1}, {self.c2}, {self.c3}, {self.c4})"


Action = PlaceAction
