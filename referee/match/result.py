"""What a local match returns: the finished game and the processes that played it."""

from __future__ import annotations

from dataclasses import dataclass

from referee.match.runner import GameReport
from referee.sandbox.launch import LaunchedBot


@dataclass(slots=True)
class MatchResult:
    """The finished game and the processes that played it (already stopped)."""

    report: GameReport
    bots: list[LaunchedBot]

    def output(self, seat: int) -> str:
        """What the seat's bot printed (bounded)."""
        return self.bots[seat].output.text() if seat < len(self.bots) else ""
