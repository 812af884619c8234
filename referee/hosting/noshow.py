"""The first-move window of casual games: a seat that has not made its first move within its
window (see :meth:`~referee.hosting.casual_pairing.CasualPairing.first_move_window`) is a
no-show, and its game is aborted (no result, nobody rated). The window runs from the moment
the seat is first on move; its clock still applies too."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from referee.match.runner import MatchRunner
from referee.server.session import BotSession

__all__ = ["no_show_sentence", "watch_first_moves"]

#: How often the watcher looks (a no-show is stopped at most this much after its window).
POLL_S = 0.05


def no_show_sentence(seat: str, window_s: float) -> str:
    return (
        f"{seat} did not make its first move within {window_s:g} s (a no-show): "
        "the game is aborted, no result"
    )


async def watch_first_moves(
    runner: MatchRunner[BotSession], windows: Sequence[float | None]
) -> int | None:
    """Abort ``runner``'s game if a seat with a window lets it pass without moving; returns
    that seat (``None`` once every such seat has moved, or the game ended)."""
    waiting = {seat for seat, window in enumerate(windows) if window is not None}
    on_move_since: dict[int, float] = {}
    while waiting and runner.report.end is None:
        waiting -= {move.seat for move in runner.report.moves if not move.book}
        seat = runner.state.to_move
        window = windows[seat]
        if seat in waiting and window is not None and not runner.state.is_over():
            since = on_move_since.setdefault(seat, time.monotonic())
            if time.monotonic() - since >= window:
                runner.abort(no_show_sentence(runner.seat_names[seat], window))
                return seat
        await asyncio.sleep(POLL_S)
    return None
