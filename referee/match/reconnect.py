"""Reconnect windows: while a seat's session is away, when its window closes and why it left.

A seat whose stream dropped keeps its place (and its clock keeps running) for its session's
resume window. The match runner wakes at the earliest of the mover's deadline and every open
window; a window that closes ends the game as a disconnect.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
