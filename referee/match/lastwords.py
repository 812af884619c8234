"""A launched bot's last move, when its process is seen to end before that move is read.

A bot may send its last move and exit at once; the referee can learn of the exit (from the
process) before the move (from the stream). The move was made: it is judged first, and the exit
is heard after it, so a finished game keeps the result its last move gave it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

from engine.adjudication import Turn
from referee.match.seat import EventKind, Seat, SeatEvent

__all__ = ["LAST_WORDS_S", "last_words"]

#: How long the bot's stream may take to end after its process did. A stream normally ends
#: with the process (its socket closes); the bound only ends the wait for one a child process
#: keeps open, and is generous so that a busy machine, slow to deliver the last bytes, never
#: turns a finished game into a crash.
LAST_WORDS_S = 10.0


async def last_words(
    inbox: asyncio.Queue[SeatEvent], sessions: Sequence[Seat], turn: Turn, event: SeatEvent
) -> SeatEvent | None:
    """When ``event`` says the mover's process ended: wait (bounded) for its stream to end, and
    return the move for this turn it sent before, if any, putting ``event`` back behind it.
    ``None`` for any other event, or when no such move came."""
    if event.kind is not EventKind.EXITED or event.seat != turn.seat:
        return None
    exited, ply = event, turn.ply
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(LAST_WORDS_S):
            await sessions[turn.seat].link_ended.wait()
    held = []
    while not inbox.empty():
        held.append(inbox.get_nowait())
    move = next((e for e in held if _is_move(e, exited.seat, ply)), None)
    for event in held:
        if event is not move:
            inbox.put_nowait(event)
    if move is not None:
        inbox.put_nowait(exited)
    return move


def _is_move(event: SeatEvent, seat: int, ply: int) -> bool:
    return (
        event.kind is EventKind.MOVE
        and event.seat == seat
        and event.move is not None
        and event.move.ply == ply
    )
