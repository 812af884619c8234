"""The end of a refereed game: the end logged, every seat told.

Kept apart from the runner's play loop: once the adjudicator has decided the end (and the runner
has settled its report), nothing here can change it; a seat that cannot be told (gone, or not
reading) is passed over.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import structlog

from client_sdk.proto import referee_pb2 as pb
from engine.adjudication.verdicts import GameEnd
from referee.match.report import GameReport
from referee.match.seat import SEND_TIMEOUT, Seat
from referee.match.transcript import Transcript
from referee.telemetry.logs import get_logger

log = get_logger("referee.match.runner")


async def announce_end(
    end: GameEnd,
    report: GameReport,
    game_over: pb.RefereeMessage,
    *,
    ply: int,
    sessions: Sequence[Seat],
    transcript: Transcript,
) -> None:
    """Log the game's ``end`` (settled in ``report`` at ``ply``) and send every seat its
    ``game_over`` message (noted in ``transcript``)."""
    structlog.contextvars.bind_contextvars(seat=None, ply=ply)
    log.info(
        "game_over",
        players=" vs ".join(seat.name for seat in report.seats),
        result=end.result(),
        verdict=str(end.verdict),
        termination=str(end.termination),
        reason=end.reason,
        plies=report.plies,
    )

    async def tell(seat: int, session: Seat) -> None:
        transcript.sent(seat, game_over)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(SEND_TIMEOUT):
                await session.send_quietly(game_over)

    await asyncio.gather(*(tell(seat, s) for seat, s in enumerate(sessions)))
