"""How grading games are played and stored: here (launched bots on a private referee) or by
the workers (PostgreSQL's queue). Both store each game under the uid grading gives it, once,
through :func:`referee.play.store.play_and_store` (``keep_aborted=False``), and treat an
aborted game alike: it is not stored (its uid stays free), it is played again, and after
:data:`~referee.tournament.aborts.MAX_ATTEMPTS` attempts (the tournaments' number) it is
given up: left out of the grade, named in the run's failed games, and played again by the
next grading.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.game import Game
from referee.analysis.grading import PlayGame
from referee.match.clock import TimeControl
from referee.sandbox.isolation import Isolation
from referee.storage import BotVersionInfo, ConflictError, Repository
from referee.telemetry.logs import get_logger
from referee.tournament.aborts import MAX_ATTEMPTS

if TYPE_CHECKING:
    from referee.workers.dispatch import QueueDispatcher

log = get_logger("referee.hosting.grade_play")

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
    from referee.play.store import AbortedNotKept, Filing, play_and_store

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
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                await play_and_store(
                    player,
                    repo,
                    seats,
                    Filing(EVENT),
                    uid=uid,
                    labels={"mode": EVENT},
                    opening=tuple(opening),
                    keep_aborted=False,
                )
            except ConflictError:
                log.info("grade_game_already_stored", game_id=uid)
                return
            except AbortedNotKept:
                log.warning("grade_game_aborted", game_id=uid, attempt=attempt)
                continue
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
            keep_aborted=False,
        )
        job = await dispatcher.enqueue_ladder(kwargs)
        status = await dispatcher.wait(job)
        log.debug("grade_job_done", job_id=job, game_id=uid, status=status)

    return play
