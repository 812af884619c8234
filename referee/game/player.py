"""The two players, as course bots expect them (``PlayerColor.RED`` / ``PlayerColor.BLUE``)."""

from __future__ import annotations

from enum import Enum


class PlayerColor(Enum):
    """A player's colour.

    ``operator.index()`` gives 0 / 1 (handy for indexing per-player arrays) while ``int()``
    gives +1 / -1 (handy as a sign in evaluation functions); bots use both.
    """

    RED = 0
    BLUE = 1

    def __str__(self) -> str:
        return self.name

    def __index__(self) -> int:
        return int(self.value)

    def __int__(self) -> int:
        return 1 if self is PlayerColor.RED else -1

    @property
    def opponent(self) -> PlayerColor:
        """The other player."""
        return PlayerColor.BLUE if self is PlayerColor.RED else PlayerColor.RED
