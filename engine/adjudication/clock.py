"""Time control and the chess clock the referee keeps for each seat.

The referee's clock is authoritative. A move's **wall** time runs from the moment the referee
has sent the move request to the moment its reader task received the answer, less any time the
referee itself was stalled (not running) meanwhile; nothing the referee does in between
(validating, writing records, logging) is charged. A move's **CPU** time is what the bot's
processes used since its previous answer (so thinking while the opponent moves is charged to
its next move), measured by whoever launched it.

Which of the two a game charges is its :class:`ClockMode`: ``cpu`` (the course's rule: the
budget and the move limit count CPU seconds, with a wall-clock backstop that still ends a bot
that blocks or sleeps) or ``wall``. A game charges CPU only when every seat's CPU is measured
(:meth:`TimeControl.charged`): one remote seat makes both seats' clocks wall clocks, so two
bots in one game are never held to different measures.

Limits: a per-move limit and a per-game budget (zero means none), a Fischer increment added
after each accepted move, and a grace margin allowed beyond whichever limit binds. Time used
within the grace is still charged, so the budget can go below zero and the grace cannot be
spent twice over a game.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

#: The course's budget: 180 s per bot per game.
DEFAULT_GAME_TIME_S = 180.0
#: Slack for scheduling and transport jitter beyond a limit.
DEFAULT_GRACE_S = 0.25
#: The wall-clock backstop of a CPU clock: this many times what the move may use ...
DEFAULT_BACKSTOP_FACTOR = 3.0
#: ... plus this many seconds (start-up of a thread pool, a page fault storm, a busy machine).
DEFAULT_BACKSTOP_EXTRA_S = 5.0


class ClockMode(enum.StrEnum):
    """What a game's clocks count: the bot's CPU seconds, or wall seconds at the referee."""

    CPU = "cpu"
    WALL = "wall"

    @property
    def label(self) -> str:
        """The words a sentence uses: ``CPU time`` or ``wall time``."""
        return "CPU time" if self is ClockMode.CPU else "wall time"


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Clock settings; ``0`` means no such limit."""

    game_time_s: float = DEFAULT_GAME_TIME_S
    move_time_s: float = 0.0
    increment_s: float = 0.0
    grace_s: float = DEFAULT_GRACE_S
    #: The clock asked for; a game charges CPU only where every seat is measured (``charged``).
    clock: ClockMode = ClockMode.CPU
    backstop_factor: float = DEFAULT_BACKSTOP_FACTOR
    backstop_extra_s: float = DEFAULT_BACKSTOP_EXTRA_S

    def __post_init__(self) -> None:
        for name in (
            "game_time_s",
            "move_time_s",
            "increment_s",
            "grace_s",
            "backstop_factor",
            "backstop_extra_s",
        ):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        object.__setattr__(self, "clock", ClockMode(self.clock))

    def charged(self, measured: Sequence[bool]) -> TimeControl:
        """These settings as a game with seats whose CPU is ``measured`` (per seat) runs them:
        the CPU clock only when every seat is measured, else the wall clock for all seats."""
        if self.clock is ClockMode.CPU and not all(measured):
            return replace(self, clock=ClockMode.WALL)
        return self

    def as_dict(self) -> dict[str, float | str]:
        """A JSON-ready form (read back by :meth:`from_dict`)."""
        return {
            "game_time_s": self.game_time_s,
            "move_time_s": self.move_time_s,
            "increment_s": self.increment_s,
            "grace_s": self.grace_s,
            "clock": str(self.clock),
            "backstop_factor": self.backstop_factor,
            "backstop_extra_s": self.backstop_extra_s,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> TimeControl:
        """The settings :meth:`as_dict` wrote (missing keys take their defaults)."""
        defaults = cls()

        def number(name: str) -> float:
            return float(str(data.get(name, getattr(defaults, name))))

        return cls(
            game_time_s=number("game_time_s"),
            move_time_s=number("move_time_s"),
            increment_s=number("increment_s"),
            grace_s=number("grace_s"),
            clock=ClockMode(str(data.get("clock", defaults.clock))),
            backstop_factor=number("backstop_factor"),
            backstop_extra_s=number("backstop_extra_s"),
        )

    def describe(self) -> str:
        """A compact human form, e.g. ``180s CPU move<=2s (grace 0.25s)``."""
        parts = [f"{self.game_time_s:g}s" if self.game_time_s else "unlimited"]
        if self.increment_s:
            parts.append(f"+{self.increment_s:g}s")
        parts.append(f" {self.clock.value.upper() if self.clock is ClockMode.CPU else 'wall'}")
        if self.move_time_s:
            parts.append(f" move<={self.move_time_s:g}s")
        return "".join(parts) + f" (grace {self.grace_s:g}s)"


@dataclass(frozen=True, slots=True)
class Spent:
    """What one move took: ``wall`` seconds at the referee (its own stalls excluded) and the
    bot's ``cpu`` seconds (``None``: not measured)."""

    wall: float
    cpu: float | None = None


@dataclass(frozen=True, slots=True)
class Allowance:
    """What one move may take: the binding ``limit`` (``None``: unlimited), its kind, and the
    clock it is counted on (a CPU limit also has a wall-clock ``backstop``)."""

    limit: float | None
    per_move: bool
    grace: float
    clock: ClockMode = ClockMode.WALL
    #: Wall seconds after the request at which a CPU-clocked move ends whatever its CPU time
    #: (``None``: no backstop; the wall clock is the limit itself).
    backstop: float | None = None

    @property
    def deadline(self) -> float | None:
        """Seconds (on this allowance's clock) after the request at which the bot is out of
        time (the budget may already be below zero, eating into the grace, so this can be zero
        or less: no time at all)."""
        return None if self.limit is None else self.limit + self.grace

    def charge(self, spent: Spent) -> float:
        """The seconds ``spent`` costs on this clock (wall time where CPU was not measured)."""
        if self.clock is ClockMode.CPU and spent.cpu is not None:
            return spent.cpu
        return spent.wall

    def blown(self, spent: Spent) -> str | None:
        """Which limit ``spent`` broke: ``"clock"`` (the charged clock ran out), ``"backstop"``
        (a CPU clock's wall backstop passed), or ``None``."""
        deadline = self.deadline
        if deadline is not None and self.charge(spent) > deadline:
            return "clock"
        if self.backstop is not None and spent.wall > self.backstop:
            return "backstop"
        return None

    def wake_in(self, spent: Spent, min_step: float = 0.02) -> float | None:
        """Wall seconds from now until a move that has taken ``spent`` so far may have run out
        (``None``: never), for a referee that waits and then measures again. A CPU clock is
        looked at again when its remaining CPU time could have passed (one busy thread uses one
        CPU second per second), never later than the backstop."""
        deadline = self.deadline
        if self.clock is ClockMode.WALL or (spent.cpu is None and self.backstop is None):
            return None if deadline is None else max(0.0, deadline - spent.wall)
        steps = []
        if deadline is not None:
            steps.append(max(min_step, deadline - (spent.cpu or 0.0)))
        if self.backstop is not None:
            steps.append(max(0.0, self.backstop - spent.wall))
        return min(steps) if steps else None


class SeatClock:
    """One seat's clock: time charged, the budget left, and each move's charge (plus the wall
    and CPU totals behind it, for records)."""

    __slots__ = ("control", "cpu_used", "moves", "remaining", "used", "wall_used")

    def __init__(self, control: TimeControl) -> None:
        self.control = control
        self.used = 0.0
        self.moves = 0
        self.remaining: float | None = control.game_time_s if control.game_time_s else None
        self.wall_used = 0.0
        #: CPU seconds measured over the game (``None``: never measured).
        self.cpu_used: float | None = None

    def allowance(self) -> Allowance:
        """The limit for the next move: the smaller of the move limit and the budget left."""
        control = self.control
        move = control.move_time_s or None
        budget = self.remaining
        if move is None and budget is None:
            limit, per_move = None, False
        elif budget is None or (move is not None and move <= budget):
            limit, per_move = move, True
        else:
            limit, per_move = budget, False
        backstop = None
        if control.clock is ClockMode.CPU and limit is not None:
            backstop = max(0.0, limit) * control.backstop_factor + control.backstop_extra_s
        return Allowance(limit, per_move, control.grace_s, control.clock, backstop)

    def charge(self, elapsed: float, *, accepted: bool = True, spent: Spent | None = None) -> None:
        """Charge ``elapsed`` seconds; the increment is earned only by an accepted move.
        ``spent`` (what was measured) goes into the wall and CPU totals."""
        self.used += elapsed
        self.moves += 1
        self.wall_used += elapsed if spent is None else spent.wall
        if spent is not None and spent.cpu is not None:
            self.cpu_used = (self.cpu_used or 0.0) + spent.cpu
        if self.remaining is not None:
            self.remaining -= elapsed
            if accepted:
                self.remaining += self.control.increment_s

    def over(self, elapsed: float, allowance: Allowance) -> bool:
        """Whether a move charged ``elapsed`` seconds broke its allowance's clock."""
        deadline = allowance.deadline
        return deadline is not None and elapsed > deadline

    @property
    def budget_total(self) -> float:
        """The budget plus increments earned so far (what ``used`` is measured against)."""
        return self.control.game_time_s + self.control.increment_s * self.moves
