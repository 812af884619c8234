"""Time control and the seat clocks (defined in :mod:`engine.adjudication.clock`, where the
SDK's local referee shares them; named here so the match room holds everything about a game)."""

from engine.adjudication.clock import (
    DEFAULT_GAME_TIME_S,
    DEFAULT_GRACE_S,
    Allowance,
    ClockMode,
    SeatClock,
    Spent,
    TimeControl,
)

__all__ = [
    "DEFAULT_GAME_TIME_S",
    "DEFAULT_GRACE_S",
    "Allowance",
    "ClockMode",
    "SeatClock",
    "Spent",
    "TimeControl",
]
