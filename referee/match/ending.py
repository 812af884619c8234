"""The end of a refereed game: the report settled, the end logged, every seat told.

Kept apart from the runner's play loop: once the adjudicator has decided the end, nothing here
can change it; a seat that cannot be told (gone, or not reading) is passed over.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

import structlog

from engine.adjudication.verdicts import GameEnd
from referee.match.seat import SEND_TIMEOUT, Seat
from referee.telemetry.logs import get_logger

if TYPE_CHECKING:
    from referee.match.runner import MatchRunner

log = get_logger("referee.match.runner")


async def announce_end(runner: MatchRunner[Any], end: GameEnd) -> None:
    """Settle ``runner``'s report with ``end``, log it, and tell both seats (GameOver)."""
    report = runner.report
    report.settle(end, runner.position, runner.clocks, runner.control, runner.timer.stalled())
    structlog.contextvars.bind_contextvars(seat=None, ply=runner.state.ply)
    log.info(
        "game_over",
        players=" vs ".join(seat.name for seat in report.seats),
        result=end.result(),
        verdict=str(end.verdict),
        termination=str(end.termination),
        reason=end.reason,
        plies=report.plies,
    )
    moves = runner.adjudicator.moves
    message = runner.messages.game_over(
        end,
        plies=report.plies,
        final_position=report.final_position,
        clocks=runner.clocks,
        last_action=moves[-1] if moves else "",
    )

    async def tell(seat: int, session: Seat) -> None:
        runner.transcript.sent(seat, message)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(SEND_TIMEOUT):
                await session.send_quietly(message)

    await asyncio.gather(*(tell(seat, s) for seat, s in enumerate(runner.sessions)))
    if runner.observer is not None:
        runner.observer.on_end(runner.state, report)
