"""How grading games are played and stored: here (launched bots on a private referee) or by
the workers (PostgreSQL's queue). Both store each game under the uid grading gives it, once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from engine.adjudication.verdicts import Verdict
from engine.game import Game
from referee.analysis.grading import PlayGame
from referee.match.clock import TimeControl
from referee.sandbox.isolation import Isolation
from referee.storage import BotVersionInfo, ConflictError, Repository
from referee.telemetry.logs import get_logger

if TYPE_CHECKING:
    from referee.workers.dispatch import QueueDispatcher

log = get_logger("referee.hosting.grade_play")

#: A game the referee aborts (its own failure, not a bot's) is played again at most this often.
MAX_ATTEMPTS = 3
EVENT = "grade"


@dataclass(frozen=True, slots=True)
class GameSettings:
    """What every grading game is played with."""

    game: Game[Any]
    time_control: TimeControl
    memory_mb: int | None = None
    connect_timeout_s: float = 30.0


def local_player(repo: Repository, settings: GameSettings, isolation: Isolation) -> PlayGame:
    """Games between launched bots, each on a private referee here, stored under their uid."""
    from referee.play.game import GamePlayer, GameTerms
    from referee.play.gamerows import finished_game

    terms = GameTerms(
        settings.game,
        settings.time_control,
        settings.memory_mb,
        settings.connect_timeout_s,
        None,
        isolation,
    )
    player = GamePlayer(terms)

    async def play(uid: str, seats: Sequence[BotVersionInfo], opening: Sequence[str]) -> None:
        for _ in range(MAX_ATTEMPTS):
            started = datetime.now(UTC)
            played = await player.play(list(seats), uid, {"mode": EVENT}, None, tuple(opening))
            end = played.report.end
            if end is None or end.verdict is Verdict.ABORTED:
                log.warning("grade_game_aborted", game_id=uid)
                continue
            row = finished_game(
                played.report,
                settings.game,
                list(seats),
                outputs=played.outputs,
                event=EVENT,
                started=started,
                finished=datetime.now(UTC),
                uid=uid,
            )
            try:
                await asyncio.to_thread(repo.record_game, row)
            except ConflictError:
                log.info("grade_game_already_stored", game_id=uid)
            return

    return play


def queue_player(dispatcher: QueueDispatcher, settings: GameSettings) -> PlayGame:
    """Games played by the workers: one ladder-style job per game, keyed by its uid (a job
    left queued by a grading run that stopped is waited for by the next, never doubled: the
    job's lock is its uid and the games table holds each uid once)."""
    from referee.workers.ladderjob import ladder_job_kwargs

    async def play(uid: str, seats: Sequence[BotVersionInfo], opening: Sequence[str]) -> None:
        kwargs = ladder_job_kwargs(
            uid,
            settings.game,
            seats,
            settings.time_control,
            settings.memory_mb,
            settings.connect_timeout_s,
            opening=opening,
            event=EVENT,
        )
        job = await dispatcher.enqueue_ladder(kwargs)
        status = await dispatcher.wait(job)
        log.debug("grade_job_done", job_id=job, game_id=uid, status=status)

    return play
