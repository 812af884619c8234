"""One finished game as plain data: the only input the rating code needs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from engine.outcome import points

NORMAL = "normal"
"""The verdict of a game that ended under the rules (no referee forfeit)."""

_SCORES = (0.0, 0.5, 1.0)


@dataclass(frozen=True, slots=True)
class GameResult:
    """A finished game between two players, from the first seat's point of view.

    ``first`` moved first (White, Tetress's Red, ...), ``second`` is the other seat.
    ``score`` is the first seat's points: 1 win, 0.5 draw, 0 loss.
    ``verdict`` says how it ended: a rules termination (``"no_legal_move"``...) or a referee
    verdict (``"time"``, ``"memory"``, ``"illegal_move"``, ``"crash"``...).
    ``forfeit`` marks a referee verdict against the losing side; the loser is the forfeiter.
    ``void`` marks a forfeit the tournament's policy voids: it is left out of ratings and
    W/D/L but still counted among the forfeiter's forfeits.
    """

    first: str
    second: str
    score: float
    verdict: str = NORMAL
    forfeit: bool = False
    void: bool = False

    def __post_init__(self) -> None:
        if self.first == self.second:
            raise ValueError(f"a player cannot play itself: {self.first!r}")
        if self.score not in _SCORES:
            raise ValueError(f"score must be 0, 0.5 or 1, not {self.score!r}")
        if self.forfeit and self.score == 0.5:
            raise ValueError("a forfeit has a loser: its score cannot be 0.5")
        if self.void and not self.forfeit:
            raise ValueError("only a forfeit can be voided")

    @classmethod
    def from_winner(
        cls,
        first: str,
        second: str,
        winner: int | None,
        verdict: str = NORMAL,
        *,
        forfeit: bool = False,
        void: bool = False,
    ) -> GameResult:
        """Build from a winning seat index (0 first, 1 second, ``None`` draw), as in Outcome."""
        if winner not in (0, 1, None):
            raise ValueError(f"winner must be 0, 1 or None, not {winner!r}")
        score = points(0, winner)
        return cls(first, second, score, verdict, forfeit, void)

    @property
    def counted(self) -> bool:
        """Whether the game counts towards ratings and W/D/L (every game but a voided one)."""
        return not self.void

    @property
    def winner(self) -> str | None:
        if self.score == 0.5:
            return None
        return self.first if self.score == 1.0 else self.second

    @property
    def loser(self) -> str | None:
        if self.score == 0.5:
            return None
        return self.second if self.score == 1.0 else self.first

    @property
    def forfeiter(self) -> str | None:
        """The player whose forfeit decided the game, or ``None``."""
        return self.loser if self.forfeit else None

    def score_of(self, player: str) -> float:
        """Points ``player`` earned in this game."""
        if player == self.first:
            return self.score
        if player == self.second:
            return 1.0 - self.score
        raise KeyError(player)


def players_of(results: Iterable[GameResult]) -> list[str]:
    """Every player in ``results`` in order of first appearance."""
    seen: dict[str, None] = {}
    for r in results:
        seen.setdefault(r.first)
        seen.setdefault(r.second)
    return list(seen)


def total_scores(results: Iterable[GameResult]) -> dict[str, float]:
    """Points per player over the counted games (e.g. the Swiss standings)."""
    scores: dict[str, float] = {}
    for r in results:
        scores.setdefault(r.first, 0.0)
        scores.setdefault(r.second, 0.0)
        if r.counted:
            scores[r.first] += r.score
            scores[r.second] += 1.0 - r.score
    return scores
