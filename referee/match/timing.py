"""What a game's moves take: wall time less the referee's own stalls, and each seat's CPU time.

A seat launched by this referee has a meter: a function returning the CPU seconds its
processes have used since launch (:meth:`referee.sandbox.launch.LaunchedBot.cpu_seconds`). The
runner marks every meter when the game starts and reads it again at each of the seat's
answers: a move's CPU time is the difference, so CPU used between its turns (pondering,
background threads) is charged to its next move, and a CPU clock cannot be dodged by thinking
while the opponent moves. A remote seat has no meter.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from engine.adjudication import Spent
from referee.match.stalls import stall_watch

__all__ = ["CpuMeter", "MoveTimer", "SeatCpu"]

#: Cumulative CPU seconds of one bot, or ``None`` when it cannot be read just now.
CpuMeter = Callable[[], float | None]


class SeatCpu:
    """The CPU meters of a game's two seats and the reading each move is counted from."""

    __slots__ = ("marks", "meters")

    def __init__(self, meters: Sequence[CpuMeter | None]) -> None:
        padded = [*meters, None, None][:2]
        self.meters: tuple[CpuMeter | None, CpuMeter | None] = (padded[0], padded[1])
        self.marks: list[float | None] = [None, None]

    @property
    def measured(self) -> tuple[bool, bool]:
        """Per seat, whether its CPU time is measured."""
        return (self.meters[0] is not None, self.meters[1] is not None)

    def mark_all(self) -> None:
        """Count every seat's CPU from now on (the game starts)."""
        for seat in (0, 1):
            self.marks[seat] = self._read(seat)

    def since_mark(self, seat: int, *, advance: bool = False) -> float | None:
        """CPU seconds ``seat`` used since its mark (``None``: not measured); ``advance`` moves
        the mark to now (the seat has answered)."""
        now = self._read(seat)
        mark = self.marks[seat]
        if now is None or mark is None:
            if advance and now is not None:
                self.marks[seat] = now
            return None
        if advance:
            self.marks[seat] = now
        return max(0.0, now - mark)

    def _read(self, seat: int) -> float | None:
        meter = self.meters[seat]
        return None if meter is None else meter()


class MoveTimer:
    """The measuring a game's runner does for its clocks (the adjudicator decides with it):
    wall time less the referee's stalls (:mod:`.stalls`), and CPU per seat (:class:`SeatCpu`)."""

    def __init__(self, meters: Sequence[CpuMeter | None]) -> None:
        self.cpu = SeatCpu(meters)
        self.stalls = stall_watch()
        self.began: float | None = None

    def start(self) -> None:
        """The game starts: the stall watch runs for it."""
        self.began = time.monotonic()
        self.stalls.acquire()

    def stop(self) -> None:
        self.stalls.release()

    def wall(self, sent: float, now: float) -> float:
        """Wall seconds from ``sent`` to ``now`` during which the referee was not stalled."""
        return max(0.0, now - sent - self.stalls.stalled_between(sent, now))

    def spent(self, seat: int, sent: float, now: float, *, answered: bool = False) -> Spent:
        """What the move of ``seat`` requested at ``sent`` has taken by ``now``: wall time less
        the referee's stalls, and CPU time since its previous answer (``answered``: this is its
        answer, so the next move's CPU is counted from here)."""
        return Spent(self.wall(sent, now), self.cpu.since_mark(seat, advance=answered))

    def stalled(self) -> float:
        """Seconds the referee was stalled since the game started, whether or not a bot was on
        move at the time."""
        if self.began is None:
            return 0.0
        return self.stalls.total_between(self.began, time.monotonic())
