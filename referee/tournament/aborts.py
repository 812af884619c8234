"""The one rule for a tournament game that keeps aborting, wherever it is played.

A game the referee aborts (a bot never connected, the referee was stopped, a worker's attempt
raised) is never a loss: it is played again. After :data:`MAX_ATTEMPTS` failed attempts the
slot is *given up*: a void game is stored in it (verdict ``aborted``, no winner, the reason
naming the attempts and the last failure), it counts for nobody, and the tournament goes on
to its end. A class of 300 teams must not wait on one broken pairing, and the game is not
lost silently: it stays in the tournament's games with its reason, and the run says how many
were given up. The in-process runner (:mod:`referee.tournament.runner`) and the workers
(:mod:`referee.workers.job`, :mod:`referee.workers.recovery`) both decide with
:func:`gives_up` and store with :func:`record_given_up`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from engine.adjudication.verdicts import Verdict
from engine.game import Game
from referee.storage import (
    BotVersionInfo,
    DuplicateGameError,
    FinishedGame,
    GameSummary,
    PairingInfo,
    Repository,
    SeatResult,
    TournamentInfo,
)
from referee.telemetry.logs import get_logger

log = get_logger("referee.tournament.aborts")

#: Attempts a tournament game gets before its slot is given up (stored void). On the workers
#: a dead worker and an error count one each too, as an aborted game does.
MAX_ATTEMPTS = 3


def gives_up(attempt: int, max_attempts: int = MAX_ATTEMPTS) -> bool:
    """Whether failed attempt number ``attempt`` (from 1) is the last: the slot is given up
    rather than played again."""
    return attempt >= max(1, max_attempts)


def given_up_game(
    info: TournamentInfo,
    game: Game[Any],
    pairing: PairingInfo,
    index: int,
    seats: Sequence[BotVersionInfo],
    attempts: int,
    reason: str,
) -> FinishedGame:
    """The void game that holds slot ``index`` of ``pairing`` after ``attempts`` failed
    attempts, the last of which failed for ``reason``."""
    now = datetime.now(UTC)
    return FinishedGame(
        game=game.name,
        seats=[SeatResult(bot_version_id=v.id) for v in seats],
        verdict=Verdict.ABORTED,
        winner_seat=None,
        plies=0,
        started_at=now,
        finished_at=now,
        reason=f"void: given up after {attempts} failed attempts ({reason})",
        game_params=dict(game.params),
        tournament_id=info.id,
        pairing_id=pairing.id,
        game_index=index,
        given_up=True,
    )


def record_given_up(
    repo: Repository,
    info: TournamentInfo,
    game: Game[Any],
    pairing: PairingInfo,
    index: int,
    seats: Sequence[BotVersionInfo],
    reason: str,
    attempts: int = MAX_ATTEMPTS,
    guard: Callable[[Session], None] | None = None,
) -> GameSummary | None:
    """Store slot ``index`` of ``pairing`` as given up (:func:`given_up_game`); ``None`` when
    the slot holds a game already (a late result won)."""
    row = given_up_game(info, game, pairing, index, seats, attempts, reason)
    try:
        summary = repo.record_game(row, guard)
    except DuplicateGameError:
        return None
    log.warning("game_void", pairing_id=pairing.id, game_index=index, reason=row.reason)
    return summary
