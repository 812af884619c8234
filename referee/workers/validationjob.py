"""Validation on the workers: an upload's first check and its full games as jobs.

``referee serve --submissions`` on PostgreSQL hands both validation steps to ``referee
worker`` processes whenever one is alive (:class:`QueuedValidation`, the server's
:class:`~referee.submissions.offload.Offload`); with none alive (or on SQLite, or with
``--in-process``) it plays them itself as before. The server still decides *when* a step
runs: the first check at once, the full games when the fair queue
(:mod:`referee.submissions.fairqueue`) serves the version, so the order rule is the server's
whoever plays. First checks are enqueued ahead of full games, and both ahead of ladder and
tournament games (the job's ``priority``), so a free slot takes a student's first check before
any game. A priority orders only what a free slot takes next, though, and a worker's slots can
all be busy with long games: first checks go on a queue of their own
(:data:`~referee.workers.FIRST_CHECK_QUEUE`), which every worker also serves with a slot that
takes nothing else (:mod:`~referee.workers.worker`), so a first check waits for at most
another first check. The full games' bots run below the first checks' CPU priority, on a
worker as on the server (:meth:`~referee.submissions.service.Submissions.judge_full`).

A job carries the submission id, the step, the store's folder (every worker must see it, as
for the ladder's uploaded bots) and the validation settings. The worker judges the version
with the same code as the server (:class:`~referee.submissions.service.Submissions`) and
records the result itself, under its lease on the job (:func:`~referee.workers.job
.lease_guard`) and only while the version is still ``validating``: a handed-on worker's late
result and a second job's duplicate are both refused, so the verdict is written once. A
worker that dies mid-step is found by its heartbeat and the job retried
(:mod:`~referee.workers.recovery`); a job that failed at every attempt is the server's to
record (the version rejected, once). A server that starts again reconciles the jobs its
previous run left (:meth:`QueuedValidation.reconcile`): it adopts those of the versions it
validates again and cancels the waiting ones of versions judged since.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable, Collection
from typing import Any

import psycopg
from structlog.contextvars import bound_contextvars

from referee.match.clock import TimeControl
from referee.sandbox.isolation import Isolation, SandboxUnavailable, choose
from referee.storage import Repository
from referee.storage import submissions as rows
from referee.storage.enums import SubmissionStatus
from referee.storage.submissions import AlreadyJudged, SubmissionInfo
from referee.submissions.build import BuildUnavailable
from referee.submissions.offload import FIRST_STEP, FULL_STEP, TAKEN_BACK
from referee.submissions.service import Submissions
from referee.submissions.store import SubmissionStore
from referee.submissions.validate import ValidationSettings
from referee.telemetry import metrics
from referee.telemetry.logs import bound_job, get_logger
from referee.tournament.aborts import MAX_ATTEMPTS
from referee.workers import FIRST_CHECK_QUEUE, QUEUE, STALL_TIMEOUT_S
from referee.workers.dispatch import QueueDispatcher
from referee.workers.job import GameFailed, LeaseLost, WorkerState, lease_guard, lease_held

log = get_logger("referee.workers.validationjob")

#: The job argument that marks a validation job (the submission's id).
VALIDATION_KEY = "validation_submission_id"
#: Job priorities (higher first; games are 0): a first check is seconds, and a student waits.
PRIORITY = {FIRST_STEP: 20, FULL_STEP: 10}
#: The queue of each step's jobs: first checks on their own, which each worker also takes in
#: a slot kept for them (a priority only orders what a free slot takes next).
STEP_QUEUE = {FIRST_STEP: FIRST_CHECK_QUEUE, FULL_STEP: QUEUE}
#: How long a count of live workers is trusted before the database is asked again.
ALIVE_CACHE_S = 1.0


def validation_lock(submission_id: int) -> str:
    """The job lock of one version's validation: its two steps never run at once."""
    return f"arena-validation-{submission_id}"


def validation_job_kwargs(
    submission_id: int, step: str, store_root: str, settings: ValidationSettings
) -> dict[str, Any]:
    """The arguments of a validation job (JSON: they are stored with the job)."""
    return {
        VALIDATION_KEY: submission_id,
        "step": step,
        "store": store_root,
        "game": settings.game,
        "params": dict(settings.game_params),
        "time_control": settings.time_control.as_dict(),
        "memory_mb": settings.memory_mb,
        "reference": settings.reference,
        "connect_timeout_s": settings.connect_timeout_s,
    }


def _service(state: WorkerState, kwargs: dict[str, Any]) -> Submissions:
    """The validation service the job judges with, on this worker's sandbox."""
    if state.isolation is None:
        state.isolation = choose(state.no_sandbox)
    uncontained = state.isolation is Isolation.NONE
    if uncontained and not state.allow_unsandboxed_uploads:
        raise SandboxUnavailable(
            "refusing to validate an uploaded bot without the sandbox; pass "
            "--allow-unsandboxed-uploads to this worker to run uploads uncontained"
        )
    memory = kwargs.get("memory_mb")
    settings = ValidationSettings(
        game=str(kwargs["game"]),
        game_params={k: int(v) for k, v in kwargs.get("params", {}).items()},
        time_control=TimeControl.from_dict(kwargs["time_control"]),
        memory_mb=float(memory) if memory else None,
        reference=str(kwargs["reference"]),
        connect_timeout_s=float(kwargs.get("connect_timeout_s", 30.0)),
        no_sandbox=uncontained,
    )
    return Submissions(state.repo, SubmissionStore(str(kwargs["store"])), validation=settings)


async def play_validation_job(
    state: WorkerState, job_id: int, worker_id: int | None, attempts: int, kwargs: dict[str, Any]
) -> str:
    """Run one validation step and record its result (``attempts``: failed ones before)."""
    sid = int(kwargs[VALIDATION_KEY])
    step = str(kwargs["step"])
    with bound_job(job_id), bound_contextvars(submission_id=sid, step=step):
        info = await asyncio.to_thread(rows.submission_by_id, state.repo.db, sid)
        if info.status is not SubmissionStatus.VALIDATING:
            log.info("job_already_done", status=str(info.status))
            return "already recorded"
        guard = lease_guard(job_id, worker_id)
        attempt = attempts + 1
        log.info("validation_started", bot=info.label)
        try:
            service = await asyncio.to_thread(_service, state, kwargs)
            judge = service.judge_first if step == FIRST_STEP else service.judge_full
            result = await judge(info)
        except asyncio.CancelledError:
            raise
        except (SandboxUnavailable, BuildUnavailable) as exc:
            # One line, not a traceback: a worker with the sandbox may take the retry.
            log.error("validation_job_refused", reason=str(exc), attempt=attempt)
            if attempt < MAX_ATTEMPTS:
                raise GameFailed(str(exc)) from exc
            # As on the server: the version stays validating, never rejected for a host.
            note = f"validation postponed: {exc}"
            await asyncio.to_thread(rows.note_progress, state.repo.db, sid, note, guard)
            return "postponed"
        except Exception as exc:
            log.exception("validation_job_failed", attempt=attempt)
            if not await asyncio.to_thread(lease_held, state.repo, job_id, worker_id):
                raise LeaseLost(f"job {job_id} was handed on while it failed: {exc}") from exc
            if attempt < MAX_ATTEMPTS:
                raise GameFailed(f"{type(exc).__name__}: {exc}") from exc
            reason = f"the validation could not be run ({exc})"
            return await _recorded(
                asyncio.to_thread(
                    rows.finish_validation,
                    state.repo.db,
                    sid,
                    accepted=False,
                    reason=reason,
                    once=True,
                    guard=guard,
                )
            )
        if step == FIRST_STEP:
            done = service.settle_first(info, result, guard)
        else:
            done = service.record(info, result, guard)
        return await _recorded(done)


async def _recorded(write: Awaitable[SubmissionInfo]) -> str:
    """``recorded`` once ``write`` stored the step's result under the job's lease, or
    ``already recorded`` when the version was judged already (a duplicate refused)."""
    try:
        info = await write
    except AlreadyJudged:
        log.info("job_duplicate")
        return "already recorded"
    log.info("validation_recorded", status=str(info.status), reason=info.reason)
    return "recorded"


class QueuedValidation:
    """The server's side: each validation step a job for the workers while one is alive
    (:class:`~referee.submissions.offload.Offload`); the dispatcher opens on first use."""

    def __init__(
        self,
        repo: Repository,
        url: str,
        store_root: str,
        settings: ValidationSettings,
        *,
        stall_timeout_s: float = STALL_TIMEOUT_S,
    ) -> None:
        self.store_root = store_root
        self.settings = settings
        self.stall_timeout_s = stall_timeout_s
        self.dispatcher = QueueDispatcher(repo, url)
        self._stack = contextlib.AsyncExitStack()
        self._opening = asyncio.Lock()
        self._open = False
        self._alive = False
        self._asked_at = -math.inf
        #: When the database last failed to answer (no job is taken back for a stall timeout
        #: after: the workers could not send their heartbeats either).
        self._failed_at = -math.inf

    async def _queue(self) -> QueueDispatcher:
        async with self._opening:
            if not self._open:
                await self._stack.enter_async_context(self.dispatcher)
                self._open = True
        return self.dispatcher

    async def available(self) -> bool:
        """Whether a worker sent a heartbeat within the stall timeout (asked at most once a
        second); a database that cannot be asked counts as none (the server validates)."""
        now = time.monotonic()
        if now - self._asked_at < ALIVE_CACHE_S:
            return self._alive
        try:
            queue = await self._queue()
            self._alive = await queue.live_workers(self.stall_timeout_s) > 0
        except (OSError, psycopg.Error) as exc:
            log.warning("validation_queue_unreachable", reason=str(exc))
            self._alive = False
            self._failed_at = now
        self._asked_at = now
        return self._alive

    async def run(self, step: str, info: SubmissionInfo) -> str | None:
        """Enqueue ``step`` of ``info`` (or find its job already waiting or running, left by
        a server that stopped) and wait for the job's final status; ``None`` when it could
        not be enqueued (the database unreachable), :data:`TAKEN_BACK` when no worker was
        left alive to run it (in both cases the server runs the step)."""
        kwargs = validation_job_kwargs(info.id, step, self.store_root, self.settings)
        try:
            queue = await self._queue()
            job_id = await queue.enqueue_keyed(
                kwargs,
                validation_lock(info.id),
                priority=PRIORITY[step],
                match={"step": step},
                queue=STEP_QUEUE[step],
            )
        except (OSError, psycopg.Error) as exc:
            log.warning("validation_not_enqueued", bot=info.label, step=step, reason=str(exc))
            self._asked_at = -math.inf
            return None
        log.info("validation_enqueued", job_id=job_id, bot=info.label, step=step)
        ended = asyncio.ensure_future(queue.wait(job_id))
        try:
            while not ended.done():
                await asyncio.wait({ended}, timeout=ALIVE_CACHE_S)
                if not ended.done() and await self._taken_back(queue, job_id, step, info):
                    return TAKEN_BACK
            return ended.result()
        finally:
            ended.cancel()

    async def reconcile(self, validating: Collection[int]) -> dict[int, frozenset[str]]:
        """At the server's start, the validation jobs an earlier run left waiting or running:
        a waiting one of a version no longer in ``validating`` (judged, or replaced by a
        newer upload) is cancelled; those of ``validating`` versions are answered (the steps
        with a job, by submission id) for the server to adopt (:meth:`run` finds the job and
        waits for it, or takes it back when no worker is alive). Nothing when the database
        cannot be asked (a job found later is still adopted by :meth:`run`)."""
        # Adopted rather than cancelled and queued anew, the simpler correct choice:
        # cancelling a *running* job would end its live worker's lease, and that worker
        # (watch_leases) would abandon all its games and exit; adopting keeps the CPU already
        # spent and needs no new rule (run() already finds a step's job, and the take-back
        # already ends one whose workers are all gone, before the server runs the step).
        keep = set(validating)
        left: dict[int, set[str]] = {}
        try:
            queue = await self._queue()
            for job_id, args, status in await queue.active_jobs_with(VALIDATION_KEY):
                sid, step = int(str(args[VALIDATION_KEY])), str(args.get("step", ""))
                job = {"job_id": job_id, "submission_id": sid, "step": step}
                if sid in keep:
                    left.setdefault(sid, set()).add(step)
                    log.info("validation_job_adopted", job_status=status, **job)
                elif status == "todo" and await queue.cancel_waiting(job_id):
                    log.info("validation_job_cancelled", reason="no longer validating", **job)
                # A running one is left to end: its result is refused as a duplicate.
        except (OSError, psycopg.Error) as exc:
            log.warning("validation_queue_unreachable", reason=str(exc))
            self._asked_at = -math.inf
        return {sid: frozenset(steps) for sid, steps in left.items()}

    async def _taken_back(
        self, queue: QueueDispatcher, job_id: int, step: str, info: SubmissionInfo
    ) -> bool:
        """Whether job ``job_id`` was just taken back from the workers: none is alive (and
        the database answered for a stall timeout, so their silence is theirs)."""
        if await self.available() or time.monotonic() - self._failed_at < self.stall_timeout_s:
            return False
        try:
            was = await queue.take_back(job_id, self.stall_timeout_s)
        except (OSError, psycopg.Error) as exc:
            log.warning("validation_queue_unreachable", reason=str(exc))
            self._failed_at = time.monotonic()
            return False
        if not was:
            return False
        # A worker that comes back finds nothing to run; its lease on a running step is gone.
        log.warning(
            "validation_taken_back",
            job_id=job_id,
            bot=info.label,
            step=step,
            job_status=was,
            reason=f"no worker sent a heartbeat for {self.stall_timeout_s:g} s",
        )
        metrics.job_finished(STEP_QUEUE[step], "taken_back")
        return True

    async def close(self) -> None:
        await self._stack.aclose()
        self._open = False
