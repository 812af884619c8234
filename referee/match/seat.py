"""What a match runner needs from a seat: the :class:`Seat` protocol, the events a seat sends
its game, and what those events mean to the adjudicator (a move's text bounded, its notes
cleaned).

The gRPC session (:class:`referee.server.session.BotSession`) is the seat every server game
uses; writing the runner against this protocol keeps :mod:`referee.match` below the server.
"""

from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass
from typing import Protocol

from client_sdk.proto import referee_pb2 as pb
from client_sdk.protocol import action_problem
from engine.adjudication import (
    Answer,
    BotFailed,
    Measured,
    MoveAnswer,
    NotAMove,
    ProtocolViolation,
    Spent,
)
from engine.adjudication.verdicts import Verdict
from referee.errors import RefereeError
from referee.text.notes import clean_note

#: Longest comment kept from a move.
MAX_COMMENT_CHARS = 256
#: How long a message outside the clocks (game start, game over, a returning seat's game) may
#: take to be written to a seat.
SEND_TIMEOUT = 10.0


class EventKind(enum.Enum):
    MOVE = "move"
    BOT_ERROR = "bot_error"
    MALFORMED = "malformed"
    DISCONNECT = "disconnect"
    #: The session is back on a new stream (after a DISCONNECT).
    RESUMED = "resumed"
    #: Injected by a launcher: the bot's process broke its memory limit (detail: the sentence).
    MEMORY = "memory"
    #: Injected by a launcher: the bot's process exited (detail: the sentence).
    EXITED = "exited"


@dataclass(slots=True)  # not frozen: built once per move, and frozen init costs more
class SeatEvent:
    """Something a game's runner must hear about from one of its seats."""

    seat: int
    kind: EventKind
    received: float
    move: pb.Move | None = None
    detail: str = ""


class SessionClosed(RefereeError):
    """Writing to a session whose stream has ended."""


class Seat(Protocol):
    """One bot's connection as a game's runner uses it."""

    #: Set once the connection has ended for good.
    closed: asyncio.Event
    #: Set whenever the current stream ends (a launched bot's last words are read by then).
    link_ended: asyncio.Event
    #: Seconds a dropped connection may take to come back (0: a drop ends it at once).
    resume_window: float
    #: How many times the connection came back on a new stream.
    resumes: int
    suspended: bool

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def resumable(self) -> bool: ...

    def attach(self, game_id: str, seat: int, inbox: asyncio.Queue[SeatEvent]) -> None: ...

    def detach(self, game_id: str) -> None: ...

    async def send_bytes(self, data: bytes) -> float: ...

    async def send_quietly(self, message: pb.RefereeMessage) -> bool: ...

    async def error(
        self, code: int, message: str, game_id: str = "", fatal: bool = False
    ) -> None: ...


def move_answer(move: pb.Move, spent: Spent) -> Answer:
    """A seat's move message as the adjudicator's answer, ``spent`` wall (and CPU) seconds after
    its request: a refused text is a protocol violation, a ``NotAMove`` keeps only cleaned
    notes."""
    too_long = action_problem(move.action)
    if too_long is not None:
        return ProtocolViolation(too_long)
    if move.HasField("not_a_move"):
        nam = move.not_a_move
        returned, expected = clean_note(nam.returned), clean_note(nam.expected)
        return NotAMove(returned, expected, spent.wall, move.peak_rss_bytes, spent.cpu)
    return MoveAnswer(move.action, spent.wall, move.peak_rss_bytes, spent.cpu)


def fault_answer(kind: EventKind, detail: str) -> Answer | None:
    """A fault a seat reported (its bot's error, an undecodable message, a launcher's memory
    or exit verdict) as the adjudicator's answer; ``None`` for a drop (the runner knows how
    long the seat has been away)."""
    if kind is EventKind.BOT_ERROR:
        return BotFailed(detail)
    if kind is EventKind.MALFORMED:
        return ProtocolViolation(detail)
    if kind is EventKind.MEMORY:
        return Measured(Verdict.MEMORY, detail)
    if kind is EventKind.EXITED:
        return Measured(Verdict.RUNTIME_ERROR, detail)
    return None
