"""One ladder game job on a worker: two exact bot versions, played here, recorded once.

The server's ladder of submitted bots (:mod:`referee.hosting.autoplay`) picks the pair and, on
PostgreSQL, enqueues a job carrying everything the game needs (:func:`ladder_job_kwargs`): the
two bot version ids in seat order, the game and its parameters, the clocks, the memory limit,
and the game's uid, generated at enqueue. The uid is the key of exactly-once results: the
games table holds each uid once (``UNIQUE(uid)``), so a retried or doubly enqueued job cannot
store the game twice. The game is played by the same :class:`~referee.play.game
.GamePlayer` the tournament jobs use and stored, under the job's lease guard
(:func:`~referee.workers.job.lease_guard`), as the rated ``ladder`` game autoplay stores (both by
:func:`referee.play.store.play_and_store`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from structlog.contextvars import bound_contextvars

from engine.game import Game
from engine.registry import load_game
from referee.match.clock import TimeControl
from referee.play.game import GamePlayer, GameTerms
from referee.play.store import AbortedNotKept, Filing, play_and_store
from referee.sandbox import priority
from referee.sandbox.isolation import Isolation, SandboxUnavailable, choose
from referee.storage import BotVersionInfo, ConflictError, NotFoundError
from referee.telemetry.logs import bound_job, get_logger
from referee.tournament.aborts import gives_up
from referee.workers.job import GameFailed, LeaseLost, WorkerState, lease_guard, lease_known
from referee.workers.live import NotifyBroadcast

log = get_logger("referee.workers.ladderjob")

#: The job argument that marks a ladder job (and is the uid of the game it stores).
LADDER_KEY = "ladder_uid"


def ladder_job_kwargs(
    uid: str,
    game: Game[Any],
    seats: Sequence[BotVersionInfo],
    time_control: TimeControl,
    memory_mb: int | None,
    connect_timeout_s: float,
    *,
    opening: Sequence[str] = (),
    event: str = "ladder",
    keep_aborted: bool = True,
) -> dict[str, Any]:
    """The arguments of a ladder job (JSON: they are stored with the job). ``opening`` (book
    moves), ``event`` and ``keep_aborted`` serve other callers of the same job, such as
    grading (``keep_aborted=False``: an aborted game is not stored but played again, up to
    the attempts a job gets, :func:`referee.play.store.play_and_store`)."""
    return {
        "keep_aborted": keep_aborted,
        "opening": list(opening),
        "event": event,
        LADDER_KEY: uid,
        "game": game.name,
        "params": dict(game.params),
        "versions": [v.id for v in seats],
        "time_control": time_control.as_dict(),
        "memory_mb": memory_mb,
        "connect_timeout_s": connect_timeout_s,
    }


def _already_stored(state: WorkerState, uid: str) -> bool:
    try:
        state.repo.get_game(uid)
    except NotFoundError:
        return False
    return True


def _player(state: WorkerState, kwargs: dict[str, Any]) -> tuple[GamePlayer, list[BotVersionInfo]]:
    if state.isolation is None:
        state.isolation = choose(state.no_sandbox)
    seats = [state.repo.get_bot_version(int(v)) for v in kwargs["versions"]]
    for v in seats:
        # Submitted versions are hostile code: --no-sandbox alone does not run them uncontained.
        if state.isolation is Isolation.NONE and not state.allow_unsandboxed_uploads:
            raise SandboxUnavailable(
                f"refusing to launch uploaded bot {v.label} without the sandbox; pass "
                "--allow-unsandboxed-uploads to this worker to run uploads uncontained"
            )
    game = load_game(str(kwargs["game"]), **{k: int(v) for k, v in kwargs["params"].items()})
    memory = kwargs.get("memory_mb")
    terms = GameTerms(
        game,
        TimeControl.from_dict(kwargs["time_control"]),
        int(memory) if memory else None,
        float(kwargs.get("connect_timeout_s", 30.0)),
        None,
        state.isolation,
    )
    return GamePlayer(terms), seats


async def play_ladder_job(
    state: WorkerState, job_id: int, worker_id: int | None, attempts: int, kwargs: dict[str, Any]
) -> str:
    """Play and store one ladder game (``attempts``: failed attempts before this one)."""
    uid = str(kwargs[LADDER_KEY])
    with bound_job(job_id), bound_contextvars(game_id=uid, ladder=True):
        if await asyncio.to_thread(_already_stored, state, uid):
            log.info("job_already_done")
            return "already recorded"
        try:
            kept = await _play(state, job_id, worker_id, uid, kwargs)
        except (LeaseLost, asyncio.CancelledError):
            raise
        except ConflictError:
            # Another attempt of this key stored the game between the check and this write.
            if await asyncio.to_thread(_already_stored, state, uid):
                log.info("job_duplicate")
                return "already recorded"
            raise
        except SandboxUnavailable as exc:
            # One line, not a traceback: a worker with the sandbox may take the retry.
            log.error("ladder_job_refused", reason=str(exc), attempt=attempts + 1)
            if not gives_up(attempts + 1):
                raise GameFailed(str(exc)) from exc
            return "void"
        except Exception as exc:
            log.exception("game_failed", attempt=attempts + 1)
            if not await lease_known(state.repo, job_id, worker_id):
                raise LeaseLost(f"job {job_id} was handed on while it failed: {exc}") from exc
            if not gives_up(attempts + 1):
                raise GameFailed(f"{type(exc).__name__}: {exc}") from exc
            # Nothing to hold for a ladder game: the ladder simply picks a next pair.
            return "void"
        if kept:
            return "recorded"
        # Aborted and not kept (grading's games): played again, as the local grader does.
        if not await lease_known(state.repo, job_id, worker_id):
            raise LeaseLost(f"job {job_id} was handed on while its game aborted")
        if not gives_up(attempts + 1):
            log.warning("game_retry", attempt=attempts + 1, reason="the game was aborted")
            raise GameFailed("the game was aborted")
        log.warning("game_given_up", attempt=attempts + 1)
        return "void"


async def _play(
    state: WorkerState, job_id: int, worker_id: int | None, uid: str, kwargs: dict[str, Any]
) -> bool:
    """Play the job's game; whether it was stored (an aborted one is not when the job says
    ``keep_aborted: false``)."""
    player, seats = await asyncio.to_thread(_player, state, kwargs)
    log.info("game_started", seats=[v.label for v in seats])
    event = str(kwargs.get("event", "ladder"))
    opening = tuple(str(m) for m in kwargs.get("opening", ()))
    filing = Filing(event)
    broadcast = NotifyBroadcast(state.publisher) if state.publisher is not None else None
    guard = lease_guard(job_id, worker_id)
    labels = {"mode": event}
    # A ladder game's bots run below the first checks' (priority.py); grading's do not.
    lower = priority.background() if event == "ladder" else contextlib.nullcontext()
    try:
        with lower:
            stored = await play_and_store(
                player,
                state.repo,
                seats,
                filing,
                uid=uid,
                labels=labels,
                opening=opening,
                broadcast=broadcast,
                guard=guard,
                keep_aborted=bool(kwargs.get("keep_aborted", True)),
            )
    except AbortedNotKept:
        log.warning("game_aborted", kept=False)
        return False
    summary = stored.summary
    log.info("game_recorded", verdict=str(summary.verdict), result=summary.result)
    return True
