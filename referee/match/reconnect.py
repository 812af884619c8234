"""Reconnect windows: while a seat's session is away, when its window closes and why it left.

A seat whose stream dropped keeps its place (and its clock keeps running) for its session's
resume window. The match runner wakes at the earliest of the mover's deadline and every open
window; a window that closes ends the game as a disconnect. :meth:`Reconnects.away` opens a
seat's window; :meth:`Reconnects.back` gives a returning seat its game again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from referee.match.report import SeatReport
from referee.match.seat import SEND_TIMEOUT, Seat, SessionClosed
from referee.match.transcript import Transcript
from referee.telemetry.logs import get_logger

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


@dataclass(slots=True)
class Reconnects:
    """A game's seats as they may drop and come back: their windows, and what a returning seat
    is sent again (the values the runner hands over, not the runner)."""

    sessions: Sequence[Seat]
    seat_reports: Sequence[SeatReport]
    transcript: Transcript
    #: A seat's GameStart, with the moves played so far.
    game_start: Callable[[int], bytes]
    #: Name the seat (and the game's ply) in what is logged from here on.
    bind_log: Callable[[int], None]
    windows: AwayWindows = field(default_factory=AwayWindows)
    #: The request the mover is waiting on (re-sent when it comes back).
    pending: tuple[int, bytes] | None = None

    async def announce(self) -> tuple[int, str] | None:
        """Send both GameStarts (before the first request, so neither bot learns of the game
        while its opponent's clock already runs for long); returns the first seat that cannot
        be told and cannot come back, and why (a resumable one is away: told when back)."""
        for seat, session in enumerate(self.sessions):
            try:
                async with asyncio.timeout(SEND_TIMEOUT):
                    await session.send_bytes(self.transcript.sent(seat, self.game_start(seat)))
            except (SessionClosed, TimeoutError) as exc:
                why = str(exc) or "it does not read its stream"
                if not session.resumable:
                    return seat, why
                self.away(seat, time.monotonic(), why)
        return None

    def away(self, seat: int, when: float, why: str) -> None:
        """``seat``'s session dropped at ``when``: its window opens (its clock runs on)."""
        window = self.sessions[seat].resume_window
        self.windows.leave(seat, when, window, why)
        self.bind_log(seat)
        log.info("seat_away", reason=why, window_s=window)

    async def back(self, seat: int) -> None:
        """The seat's session is back: give it the game again, and the pending request."""
        session = self.sessions[seat]
        if not self.windows.back(seat) and not session.resumes:
            return
        self.seat_reports[seat].reconnects += 1
        self.bind_log(seat)
        log.info("seat_back")
        messages = [self.game_start(seat)]
        if self.pending is not None and self.pending[0] == seat:
            messages.append(self.pending[1])
        try:
            async with asyncio.timeout(SEND_TIMEOUT):
                for data in messages:
                    await session.send_bytes(self.transcript.sent(seat, data))
        except (SessionClosed, TimeoutError):
            # Dropped again: its DISCONNECT event follows (or its window still runs).
            if session.resumable and not self.windows.is_away(seat):
                self.away(seat, time.monotonic(), "it dropped again while resuming")
