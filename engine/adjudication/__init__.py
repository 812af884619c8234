"""Adjudication: the referee's decisions about one game, pure and synchronous (no I/O).

It lives beside the rules, not in ``referee/``, because two referees use it: the networked
match runner (``referee.match``) and the SDK's in-process ``client_sdk.testing.play_local``,
and bot authors install the SDK without the server. The vocabulary (:class:`Verdict`,
:class:`GameEnd`), the clocks (:class:`TimeControl`, :class:`SeatClock`) and the
:class:`Adjudicator` that applies them are all here.
"""

from engine.adjudication.adjudicator import (
    Accepted,
    Adjudicator,
    Answer,
    BotFailed,
    Disconnected,
    Measured,
    MoveAnswer,
    NotAMove,
    ProtocolViolation,
    Strike,
    TimedOut,
    Turn,
)
from engine.adjudication.clock import Allowance, ClockMode, SeatClock, Spent, TimeControl
from engine.adjudication.verdicts import Ending, GameEnd, Verdict, parse_ending, ply_number

__all__ = [
    "Accepted",
    "Adjudicator",
    "Allowance",
    "Answer",
    "BotFailed",
    "ClockMode",
    "Disconnected",
    "Ending",
    "GameEnd",
    "Measured",
    "MoveAnswer",
    "NotAMove",
    "ProtocolViolation",
    "SeatClock",
    "Spent",
    "Strike",
    "TimeControl",
    "TimedOut",
    "Turn",
    "Verdict",
    "parse_ending",
    "ply_number",
]
