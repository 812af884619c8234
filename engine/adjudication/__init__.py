"""Adjudication: the referee's decisions about one game, pure and synchronous (no I/O).

It lives beside the rules, not in ``referee/``, because two referees use it: the networked
match runner (``referee.match``) and the SDK's in-process ``client_sdk.testing.play_local``,
and bot authors install the SDK without the server. The vocabulary (:class:`Verdict`,
:class:`GameEnd`), the clocks (:class:`TimeControl`, :class:`SeatClock`) and the
:class:`Adjudicator` that applies them are all here.
"""

import typing

if typing.TYPE_CHECKING:
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

#: Where each name lives. Imported on first use: a bot needs the vocabulary
#: (``engine.adjudication.verdicts``) before its first move, never the adjudicator or clocks.
_HOMES = {
    **dict.fromkeys(
        (
            "Accepted",
            "Adjudicator",
            "Answer",
            "BotFailed",
            "Disconnected",
            "Measured",
            "MoveAnswer",
            "NotAMove",
            "ProtocolViolation",
            "Strike",
            "TimedOut",
            "Turn",
        ),
        "adjudicator",
    ),
    **dict.fromkeys(("Allowance", "ClockMode", "SeatClock", "Spent", "TimeControl"), "clock"),
    **dict.fromkeys(("Ending", "GameEnd", "Verdict", "parse_ending", "ply_number"), "verdicts"),
}


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


def __getattr__(name: str) -> typing.Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


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
