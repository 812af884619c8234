"""Reconnect windows: while a seat's session is away, when its window closes and why it left.

A seat whose stream dropped keeps its place (and its clock keeps running) for its session's
resume window. The match runner wakes at the earliest of the mover's deadline and every open
window; a window that closes ends the game as a disconnect. :func:`seat_away` opens a seat's
window; :func:`seat_back` gives a returning seat its game again.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from referee.match.seat import SEND_TIMEOUT, Seat, SessionClosed
from referee.telemetry.logs import get_logger

if TYPE_CHECKING:
    from referee.match.runner import MatchRunner

log = get_logger("referee.match.runner")


@dataclass(slots=True)
class AwayWindows:
    """The open reconnect window of each seat (``None``: the seat is connected)."""

    closes_at: list[float | None] = field(default_factory=lambda: [None, None])
    why: list[str] = field(default_factory=lambda: ["", ""])
    length: list[float] = field(default_factory=lambda: [0.0, 0.0])

    def leave(self, seat: int, when: float, window_s: float, why: str) -> None:
        """``seat`` dropped at monotonic time ``when``; it may come back for ``window_s``."""
        self.closes_at[seat] = when + window_s
        self.length[seat] = window_s
        self.why[seat] = why

    def back(self, seat: int) -> bool:
        """``seat`` is back; returns whether it had been away."""
        was_away = self.closes_at[seat] is not None
        self.closes_at[seat] = None
        return was_away

    def is_away(self, seat: int) -> bool:
        return self.closes_at[seat] is not None

    def earliest(self) -> float | None:
        """When the first open window closes (``None``: no seat is away)."""
        open_ = [t for t in self.closes_at if t is not None]
        return min(open_) if open_ else None

    def closed(self, now: float, first: int) -> int | None:
        """A seat whose window has closed by ``now`` (``first`` is checked first)."""
        for seat in (first, 1 - first):
            closes = self.closes_at[seat]
            if closes is not None and now >= closes:
                return seat
        return None


def seat_away(runner: MatchRunner[Seat], seat: int, when: float, why: str) -> None:
    """``seat``'s session dropped at ``when``: its reconnect window opens (its clock runs on)."""
    window = runner.sessions[seat].resume_window
    runner.away.leave(seat, when, window, why)
    runner.bind_log(seat, runner.state.ply)
    log.info("seat_away", reason=why, window_s=window)


async def seat_back(runner: MatchRunner[Seat], seat: int) -> None:
    """The seat's session is back: give it the game again, and the pending request."""
    session = runner.sessions[seat]
    if not runner.away.back(seat) and not session.resumes:
        return
    runner.report.seats[seat].reconnects += 1
    runner.bind_log(seat, runner.state.ply)
    log.info("seat_back")
    messages = [runner.game_start(seat)]
    if runner.pending is not None and runner.pending[0] == seat:
        messages.append(runner.pending[1])
    try:
        async with asyncio.timeout(SEND_TIMEOUT):
            for data in messages:
                await session.send_bytes(runner.transcript.sent(seat, data))
    except (SessionClosed, TimeoutError):
        # Dropped again: its DISCONNECT event follows (or its window still runs).
        if session.resumable and not runner.away.is_away(seat):
            seat_away(runner, seat, time.monotonic(), "it dropped again while resuming")
