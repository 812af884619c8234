"""How a game ended, as data (never as a string to be parsed back)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Termination(enum.StrEnum):
    """Why a game ended under the rules of its game.

    Referee verdicts (time, memory, crashes...) are not rules outcomes and live in the referee.
    """

    # Tetress
    NO_LEGAL_MOVE = "no_legal_move"
    """The player to move had no legal action and loses."""
    TURN_LIMIT = "turn_limit"
    """The action limit was reached; more tokens wins, equal counts draw."""

    # Asymmetric Tetris Tactics
    TOP_ROW = "top_row"
    """A block was left in the top row after the placer's turn: the chooser wins."""
    REPETITION = "repetition"
    """The same well occurred at the end of two placer turns: the placer wins."""
    TURNS_SURVIVED = "turns_survived"
    """The placer completed the turn quota without losing: the placer wins."""
    ROWS_CLEARED = "rows_cleared"
    """The placer cleared the row quota: the placer wins."""
    FOUR_ROWS = "four_rows"
    """The placer cleared four rows at once: the placer wins."""
    NO_ENTRY = "placer_has_no_entry"
    """The chosen piece had no legal entry position: the chooser wins."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a game: who won (a seat index, or ``None`` for a draw) and why."""

    termination: Termination
    winner: int | None

    @property
    def is_draw(self) -> bool:
        return self.winner is None

    def result(self) -> str:
        """The result as a PGN-style score: ``1-0``, ``0-1`` or ``1/2-1/2``."""
        return result_text(self.winner)

    def score(self, seat: int) -> float:
        """Points for ``seat``: 1 for a win, 0.5 for a draw, 0 for a loss."""
        return points(seat, self.winner)


# The one place a winner becomes result text and points: records, the referee's GameOver,
# storage, ratings and the SDK all go through these two.


def result_text(winner: int | None, *, aborted: bool = False) -> str:
    """PGN-style result of a game won by seat ``winner`` (``None``: a draw): ``1-0``, ``0-1``,
    ``1/2-1/2``, or ``*`` for a game that was stopped without a result."""
    if aborted:
        return "*"
    if winner is None:
        return "1/2-1/2"
    return "1-0" if winner == 0 else "0-1"


def points(seat: int, winner: int | None, *, aborted: bool = False) -> float:
    """Points ``seat`` earned: 1 for a win, 0.5 for a draw, 0 for a loss or a stopped game."""
    if aborted:
        return 0.0
    if winner is None:
        return 0.5
    return 1.0 if seat == winner else 0.0
