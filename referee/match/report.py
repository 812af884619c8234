"""What one game leaves behind: every accepted move with its measurements, the per-seat
totals, and the report the record, the stored row and ``referee match --json`` are made of."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NotRequired, Protocol, TypedDict

from engine.adjudication.verdicts import GameEnd
from engine.game import Game, State
from engine.records.search import SearchInfo
from referee.match.clock import SeatClock, TimeControl
from referee.match.transcript import Transcript
from referee.telemetry.metrics import game_unplayed


@dataclass(frozen=True, slots=True)
class MoveLog:
    """One accepted move with everything measured about it.

    ``time_s`` is what the move was charged on the game's clock; ``wall_s`` its wall time at
    the referee (the referee's own stalls excluded, ``stall_s``) and ``cpu_s`` the CPU time the
    bot's processes used for it (``None``: not measured, e.g. a remote bot).
    """

    ply: int
    seat: int
    action: str
    time_s: float
    think_time_s: float
    peak_rss_bytes: int
    clock_after_s: float | None
    comment: str = ""
    #: Played by the referee from an openings book, not chosen by the seat.
    book: bool = False
    wall_s: float | None = None
    cpu_s: float | None = None
    stall_s: float = 0.0

    #: What the bot said it thought (its think record, in bounds), if anything.
    search: SearchInfo | None = None

    @property
    def wall(self) -> float:
        """The move's wall time at the referee (its charge where no wall time was kept)."""
        return self.time_s if self.wall_s is None else self.wall_s

    @property
    def lag_s(self) -> float:
        """Referee-measured wall time minus the bot's own: transport and scheduling."""
        return self.wall - self.think_time_s


@dataclass(slots=True)
class SeatReport:
    """Per-seat totals of one game."""

    name: str
    version: str
    time_used_s: float = 0.0
    #: Wall and CPU time over the game (CPU ``None``: not measured).
    wall_used_s: float = 0.0
    cpu_used_s: float | None = None
    #: How its CPU time was measured (``cgroup_v1``, ``cgroup_v2``, ``process_tree``; empty:
    #: not measured).
    cpu_method: str = ""
    moves: int = 0
    #: The highest peak resident memory the bot reported with its moves.
    peak_rss_bytes: int = 0
    #: The highest resident memory of the bot's process tree as sampled by its launcher
    #: (0: not launched by this referee).
    sampled_rss_bytes: int = 0
    remaining_s: float | None = None
    #: How a launcher measured the sampled figure: ``rss_poll`` or ``cgroup`` (empty: the bot
    #: was not launched here, its own reports are all there is).
    memory_method: str = ""
    #: Every layer that measured and limited a launched bot (e.g. ``rlimit_data+rss_poll``).
    memory_layers: str = ""
    #: How a launched bot's process ended (e.g. ``killed by signal SIGSEGV``); empty if remote.
    exit: str = ""
    #: What a launched bot wrote to stdout/stderr (bounded), kept for its author.
    output: str = ""
    #: Times the bot's session dropped and came back during the game.
    reconnects: int = 0
    #: The seed the game handed the seat (``GameInfo.seed``; a launched bot's is also in its
    #: ``TETROMINO_SEED``); None: a game that never started.
    seed: int | None = None

    @property
    def peak_memory_bytes(self) -> int:
        """The figure the limit is judged on: the launcher's when launched here, else the bot's
        own report."""
        if self.memory_method or self.sampled_rss_bytes:
            return self.sampled_rss_bytes
        return self.peak_rss_bytes

    @property
    def memory_measured_by(self) -> str:
        """How the peak was measured: ``rss_poll``, ``cgroup`` or ``self-reported``."""
        if self.memory_method:
            return self.memory_method
        return "rss_poll" if self.sampled_rss_bytes else "self-reported"


class SeatSummaryJson(TypedDict):
    """One seat in :meth:`GameReport.summary`; ``referee match`` adds the bot's ``spec`` and
    the path of a faulted seat's ``failure_pack``."""

    bot: str
    version: str
    time_used_s: float
    wall_used_s: float
    cpu_used_s: float | None
    cpu_measured_by: str | None
    time_remaining_s: float | None
    moves: int
    peak_memory_mb: float
    peak_memory_reported_mb: float
    peak_memory_sampled_mb: float
    memory_measured_by: str
    memory_layers: str | None
    exit: str | None
    reconnects: int
    spec: NotRequired[str]
    failure_pack: NotRequired[str]


class TimeControlJson(TypedDict):
    game_time_s: float
    move_time_s: float
    increment_s: float
    grace_s: float
    clock: str


class GameSummaryJson(TypedDict):
    """:meth:`GameReport.summary`, what ``referee match --json`` prints; ``referee match``
    adds the ``sandbox`` and the ``record`` written."""

    game_id: str
    game: str
    params: dict[str, int]
    winner: str
    winner_seat: int | None
    result: str
    verdict: str
    termination: str
    reason: str
    offender: str | None
    plies: int
    seats: dict[str, SeatSummaryJson]
    time_control: TimeControlJson
    clock: str
    referee_stalled_s: float
    memory_limit_mb: float
    started_at: str
    finished_at: str
    sandbox: NotRequired[str]
    record: NotRequired[str]


@dataclass(slots=True)
class GameReport:
    """Everything about one finished game: what the record and the result line are made of."""

    game_id: str
    game: str
    params: dict[str, int]
    seat_names: tuple[str, str]
    seats: list[SeatReport]
    time_control: TimeControl
    memory_limit_bytes: int
    initial_position: str
    started_at: str
    labels: dict[str, str] = field(default_factory=dict)
    moves: list[MoveLog] = field(default_factory=list)
    final_position: str = ""
    finished_at: str = ""
    end: GameEnd | None = None
    #: Moves whose lag (referee time minus think time) exceeded ``LAG_WARN_S``; the lag is
    #: charged like the rest of the move, this only counts them.
    slow_lag_moves: int = 0
    #: Seconds during which the referee itself was stalled while a bot was on move (not
    #: charged to it; see :mod:`referee.match.stalls`).
    stalled_s: float = 0.0
    #: Each seat's messages with the referee (see :mod:`referee.match.transcript`).
    transcript: Transcript | None = field(default=None, repr=False, compare=False)

    @property
    def plies(self) -> int:
        return len(self.moves)

    def settle(
        self,
        end: GameEnd,
        position: str,
        clocks: Sequence[SeatClock],
        control: TimeControl,
        stalled_s: float,
    ) -> None:
        """Fill in the end of the game: result, final position, the clocks as the game ran
        them and each seat's totals from its clock."""
        self.end = end
        self.final_position = position
        self.finished_at = now_text()
        self.time_control = control
        self.stalled_s = stalled_s
        for seat, (seat_report, clock) in enumerate(zip(self.seats, clocks, strict=True)):
            seat_report.time_used_s = clock.used
            seat_report.wall_used_s = clock.wall_used
            seat_report.cpu_used_s = clock.cpu_used
            seat_report.remaining_s = clock.remaining
            seat_report.moves = sum(1 for m in self.moves if m.seat == seat and not m.book)

    def summary(self) -> GameSummaryJson:
        """The JSON-ready result (what ``referee match --json`` prints)."""
        end = self.end
        assert end is not None
        mb = 1024 * 1024
        return {
            "game_id": self.game_id,
            "game": self.game,
            "params": self.params,
            "winner": end.winner_name(self.seat_names),
            "winner_seat": end.winner,
            "result": end.result(),
            "verdict": str(end.verdict),
            "termination": str(end.termination),
            "reason": end.reason,
            "offender": None if end.offender is None else self.seat_names[end.offender],
            "plies": self.plies,
            "seats": {
                name: {
                    "bot": seat.name,
                    "version": seat.version,
                    "time_used_s": round(seat.time_used_s, 6),
                    "wall_used_s": round(seat.wall_used_s, 6),
                    "cpu_used_s": None if seat.cpu_used_s is None else round(seat.cpu_used_s, 6),
                    "cpu_measured_by": seat.cpu_method or None,
                    "time_remaining_s": None
                    if seat.remaining_s is None
                    else round(seat.remaining_s, 6),
                    "moves": seat.moves,
                    "peak_memory_mb": round(seat.peak_memory_bytes / mb, 3),
                    "peak_memory_reported_mb": round(seat.peak_rss_bytes / mb, 3),
                    "peak_memory_sampled_mb": round(seat.sampled_rss_bytes / mb, 3),
                    "memory_measured_by": seat.memory_measured_by,
                    "memory_layers": seat.memory_layers or None,
                    "exit": seat.exit or None,
                    "reconnects": seat.reconnects,
                }
                for name, seat in zip(self.seat_names, self.seats, strict=True)
            },
            "time_control": {
                "game_time_s": self.time_control.game_time_s,
                "move_time_s": self.time_control.move_time_s,
                "increment_s": self.time_control.increment_s,
                "grace_s": self.time_control.grace_s,
                "clock": str(self.time_control.clock),
            },
            "clock": str(self.time_control.clock),
            "referee_stalled_s": round(self.stalled_s, 6),
            "memory_limit_mb": round(self.memory_limit_bytes / mb, 3),
            "started_at": self.started_at,
            "finished_at": self.finished_at,
        }


class Observer(Protocol):
    """Hooks for displays (``referee match -v``) and live feeds; must not block."""

    def on_move(self, state: State[Any], move: MoveLog, clocks: Sequence[SeatClock]) -> None: ...

    def on_end(self, state: State[Any], report: GameReport) -> None: ...


#: Called before a fault verdict is announced; may refine it (e.g. a disconnect whose process
#: crashed becomes a runtime error with the crash's message).
Refiner = Callable[[GameEnd], Awaitable[GameEnd]]


def new_game_id() -> str:
    """A fresh game id (16 hex digits, at least one of them a letter: a reference made only
    of decimal digits means a database id, so a uid must never look like one)."""
    while True:
        uid = uuid.uuid4().hex[:16]
        if not uid.isdigit():
            return uid


def now_text() -> str:
    """The current UTC time as ISO text with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def unplayed_report(
    game: Game[Any],
    end: GameEnd,
    seats: Sequence[SeatReport],
    *,
    game_id: str = "",
    time_control: TimeControl | None = None,
    memory_limit_bytes: int = 0,
    labels: dict[str, str] | None = None,
) -> GameReport:
    """The report of a game that never started (a seat missing): no moves, ended by ``end``
    (counted in the verdict metrics like a played game's)."""
    game_unplayed(game.name, end.verdict)
    names = game.seat_names
    position = game.new_state().to_string()
    return GameReport(
        game_id=game_id,
        game=game.name,
        params=dict(game.params),
        seat_names=(names[0], names[1]),
        seats=list(seats),
        time_control=time_control or TimeControl(),
        memory_limit_bytes=memory_limit_bytes,
        initial_position=position,
        started_at="",
        labels=dict(labels or {}),
        final_position=position,
        end=end,
    )
