"""The value types of a stored game: what the match side hands :meth:`record_game`
(:class:`FinishedGame` with its :class:`SeatResult` seats) and what reading one gives back
(:class:`GameSummary` with its :class:`SeatInfo` seats, and :class:`GameDetail`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engine.adjudication.verdicts import Ending, Verdict
from referee.storage.enums import GameKind, MemoryMeasure


@dataclass(frozen=True, slots=True)
class SeatResult:
    """One seat of a finished game, as the match runner measured it."""

    bot_version_id: int
    time_used_s: float = 0.0
    reported_think_s: float | None = None
    peak_memory_bytes: int | None = None
    memory_measure: MemoryMeasure = MemoryMeasure.UNKNOWN
    #: The bot's captured standard error (already bounded by the runner).
    stderr: str | None = None
    #: The seat's failure pack (JSON text, see docs/records.md) when its fault ended the game.
    failure_pack: str | None = None


@dataclass(frozen=True, slots=True)
class FinishedGame:
    """Everything :meth:`Repository.record_game` stores about one game.

    ``seats[i]`` is seat ``i``. ``moves`` holds one mapping per ply, by convention with
    ``seat``, ``move``, ``measured_s`` (the referee's clock), ``reported_s`` (the bot's own
    think time) and ``memory_bytes``; any extra keys are kept.
    """

    game: str
    seats: Sequence[SeatResult]
    verdict: Verdict
    winner_seat: int | None
    plies: int
    started_at: datetime
    finished_at: datetime
    reason: str = ""
    #: The seat at fault for a fault verdict (``GameEnd.offender``).
    offender_seat: int | None = None
    termination: Ending | None = None
    game_params: Mapping[str, Any] = field(default_factory=dict)
    moves: Sequence[Mapping[str, Any]] = ()
    record_text: str | None = None
    record_json: Mapping[str, Any] | None = None
    tournament_id: int | None = None
    pairing_id: int | None = None
    game_index: int = 0
    #: The game id used on the wire; a new UUID when not given.
    uid: str | None = None
    #: An ``aborted`` game that holds its slot anyway: given up on after repeated failures
    #: (recorded void with the reason, never replayed, so the tournament can finish).
    given_up: bool = False
    #: ``validation`` games are never rated and never public (see :class:`GameKind`).
    kind: GameKind = GameKind.RATED
    #: Stored but left out of results and ratings (e.g. a casual win over a bot that failed
    #: to answer again, see docs/ratings.md).
    voided: bool = False


@dataclass(frozen=True, slots=True)
class SeatInfo:
    seat: int
    bot_version_id: int
    score: float
    time_used_s: float
    reported_think_s: float | None
    peak_memory_bytes: int | None
    memory_measure: MemoryMeasure


@dataclass(frozen=True, slots=True)
class GameSummary:
    id: int
    uid: str
    tournament_id: int | None
    pairing_id: int | None
    game_index: int
    game: str
    game_params: Mapping[str, Any]
    verdict: Verdict
    termination: Ending | None
    reason: str
    result: str
    winner_seat: int | None
    offender_seat: int | None
    #: Left out of standings and ratings (forfeit policy "void", or aborted).
    voided: bool
    #: Holds its pairing slot; ``False`` only for aborted games, which are replayed.
    counted: bool
    plies: int
    started_at: datetime
    finished_at: datetime
    seats: tuple[SeatInfo, ...]
    #: The isolation its launched bots ran under (the record's ``Sandbox`` tag: ``bwrap`` or
    #: ``none``); ``None`` when the game's bots were not launched by the referee.
    sandbox: str | None = None
    #: ``rated``, or ``validation`` (private to the uploader and the instructor, never rated).
    kind: GameKind = GameKind.RATED


@dataclass(frozen=True, slots=True)
class GameDetail:
    summary: GameSummary
    moves: tuple[Mapping[str, Any], ...]
    record_text: str | None
    record_json: Mapping[str, Any] | None
    stderr: tuple[str | None, ...]
    #: Each seat's failure pack (JSON text), None for a seat that did not fault.
    failure_packs: tuple[str | None, ...] = ()
