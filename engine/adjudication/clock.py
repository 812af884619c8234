"""Time control and the chess clock the referee keeps for each seat.

The referee's clock is authoritative: a move's time runs from the moment the referee has sent
the move request to the moment its reader task received the answer. Nothing the referee does
in between (validating, writing records, logging) is charged.

Limits: a per-move limit and a per-game budget (zero means none), a Fischer increment added
after each accepted move, and a grace margin allowed beyond whichever limit binds. Time used
within the grace is still charged, so the budget can go below zero and the grace cannot be
spent twice over a game.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: The course's budget: 180 s per bot per game.
DEFAULT_GAME_TIME_S = 180.0
#: Slack for scheduling and transport jitter beyond a limit.
DEFAULT_GRACE_S = 0.25


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Clock settings; ``0`` means no such limit."""

    game_time_s: float = DEFAULT_GAME_TIME_S
    move_time_s: float = 0.0
    increment_s: float = 0.0
    grace_s: float = DEFAULT_GRACE_S

    def __post_init__(self) -> None:
        for name in ("game_time_s", "move_time_s", "increment_s", "grace_s"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")

    def describe(self) -> str:
        """A compact human form, e.g. ``180s+0s/move<=2s (grace 0.25s)``."""
        parts = [f"{self.game_time_s:g}s" if self.game_time_s else "unlimited"]
        if self.increment_s:
            parts.append(f"+{self.increment_s:g}s")
        if self.move_time_s:
            parts.append(f" move<={self.move_time_s:g}s")
        return "".join(parts) + f" (grace {self.grace_s:g}s)"


@dataclass(frozen=True, slots=True)
class Allowance:
    """What one move may take: the binding ``limit`` (``None``: unlimited) and its kind."""

    limit: float | None
    per_move: bool
    grace: float

    @property
    def deadline(self) -> float | None:
        """Seconds after the request at which the bot is out of time (the budget may already
        be below zero, eating into the grace, so this can be zero or less: no time at all)."""
        return None if self.limit is None else self.limit + self.grace


class SeatClock:
    """One seat's clock: time used, the budget left, and each move's charge."""

    __slots__ = ("control", "moves", "remaining", "used")

    def __init__(self, control: TimeControl) -> None:
        self.control = control
        self.used = 0.0
        self.moves = 0
        self.remaining: float | None = control.game_time_s if control.game_time_s else None

    def allowance(self) -> Allowance:
        """The limit for the next move: the smaller of the move limit and the budget left."""
        move = self.control.move_time_s or None
        budget = self.remaining
        if move is None and budget is None:
            return Allowance(None, False, self.control.grace_s)
        if budget is None or (move is not None and move <= budget):
            return Allowance(move, True, self.control.grace_s)
        return Allowance(budget, False, self.control.grace_s)

    def charge(self, elapsed: float, *, accepted: bool = True) -> None:
        """Charge ``elapsed`` seconds; the increment is earned only by an accepted move."""
        self.used += elapsed
        self.moves += 1
        if self.remaining is not None:
            self.remaining -= elapsed
            if accepted:
                self.remaining += self.control.increment_s

    def over(self, elapsed: float, allowance: Allowance) -> bool:
        """Whether a move that took ``elapsed`` seconds broke its allowance."""
        deadline = allowance.deadline
        return deadline is not None and elapsed > deadline

    @property
    def budget_total(self) -> float:
        """The budget plus increments earned so far (what ``used`` is measured against)."""
        return self.control.game_time_s + self.control.increment_s * self.moves
