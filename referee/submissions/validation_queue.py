"""The queue of full validations: the rule of :mod:`referee.submissions.fairqueue` applied to
live versions, ``slots`` validations at once, with each one's place and wait estimate.

No task runs while nothing is queued: each validation is a task started when a slot is free
and, when it ends, starts the next one. A version replaced by its team's newer upload gets
its own verdict at once (``supersede``), never a validation.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from referee.storage.submissions import SubmissionInfo
from referee.submissions import fairqueue
from referee.submissions.fairqueue import Waiting
from referee.telemetry.logs import get_logger
from referee.telemetry.metrics import observe_validation, set_validation_queue

log = get_logger("referee.submissions.queue")

#: How many recent validation times the wait estimate is computed from.
MEASURED = 20

Run = Callable[[SubmissionInfo], Awaitable[SubmissionInfo]]
Supersede = Callable[[SubmissionInfo, SubmissionInfo], Awaitable[SubmissionInfo]]


@dataclass(frozen=True, slots=True)
class QueueRow:
    """One line of the instructor's view: a version running or waiting, and since when."""

    team: str
    label: str
    submission_id: int
    state: str  # "running" or "waiting"
    place: int  # 0 while running
    waited_s: float
    estimate_s: float | None


@dataclass(frozen=True, slots=True)
class Position:
    """Where one version stands: ``waiting`` (with its place, 1: next, and the estimated
    seconds until it starts, ``None`` until a validation was measured), ``running``, or ""
    (not in this queue)."""

    state: str
    place: int = 0
    estimate_s: float | None = None


#: What a version's reason says while its full validation games run (set by the service).
RUNNING_NOTE = "full validation games running"


def rows_from_store(versions: list[SubmissionInfo], now: float) -> list[QueueRow]:
    """The queue as the database shows it (``referee bot queue`` in another process): the
    versions still ``validating``, running ones first, then the waiting ones in the order
    the server serves them (the same rule); ``now``: the current epoch time."""
    validating = [v for v in versions if v.status.value == "validating"]
    by_id = {v.id: v for v in validating}
    running = {v.owner for v in validating if RUNNING_NOTE in v.reason}
    waiting = [
        Waiting(v.owner, v.id, v.uploaded_at.timestamp())
        for v in validating
        if RUNNING_NOTE not in v.reason
    ]
    out = [
        QueueRow(v.owner, v.label, v.id, "running", 0, now - v.uploaded_at.timestamp(), None)
        for v in validating
        if RUNNING_NOTE in v.reason
    ]
    for place, w in enumerate(fairqueue.order(waiting, running), start=1):
        v = by_id[w.submission_id]
        out.append(QueueRow(w.team, v.label, v.id, "waiting", place, now - w.uploaded_at, None))
    return out


class ValidationQueue:
    """Full validations in the fair order, ``slots`` at once (``run`` plays them)."""

    def __init__(self, run: Run, supersede: Supersede, slots: int = 1) -> None:
        self._run = run
        self._supersede = supersede
        self.slots = max(1, slots)
        self._waiting: list[Waiting] = []
        self._infos: dict[int, SubmissionInfo] = {}
        self._futures: dict[int, asyncio.Future[SubmissionInfo]] = {}
        self._queued_at: dict[int, float] = {}
        self._running: dict[str, int] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        #: Measured full validation times (seconds), newest last.
        self.durations: collections.deque[float] = collections.deque(maxlen=MEASURED)
        #: The longest a version waited for its full games to start (seconds).
        self.longest_wait_s = 0.0

    def put(self, info: SubmissionInfo) -> asyncio.Future[SubmissionInfo]:
        """Queue ``info``; its final verdict arrives on the returned future."""
        future: asyncio.Future[SubmissionInfo] = asyncio.get_running_loop().create_future()
        entry = Waiting(info.owner, info.id, info.uploaded_at.timestamp())
        self._waiting, replaced = fairqueue.admit(self._waiting, entry)
        self._infos[info.id] = info
        self._futures[info.id] = future
        self._queued_at[info.id] = time.monotonic()
        if replaced is not None:
            self._start(self._replace(replaced.submission_id, info))
        self._pump()
        return future

    def position(self, submission_id: int) -> tuple[int, float | None]:
        """The version's place (1: next; 0: running or not queued) and estimated wait (s)."""
        place = fairqueue.place_of(self._waiting, self._running, submission_id)
        wait = fairqueue.estimate_s(place, self.durations, self.slots, len(self._running))
        return place, wait

    def where(self, submission_id: int) -> Position:
        """The version's :class:`Position` in this queue (what the student is shown)."""
        if submission_id in self._running.values():
            return Position("running")
        place, wait = self.position(submission_id)
        return Position("waiting", place, wait) if place else Position("")

    def snapshot(self) -> dict[int, Position]:
        """Every queued version's :class:`Position`, read now (on the event loop: a view
        built in a worker thread reads this copy, never the live queue)."""
        ids = [*self._running.values(), *(w.submission_id for w in self._waiting)]
        return {sid: self.where(sid) for sid in ids}

    def rows(self) -> list[QueueRow]:
        """Running validations, then the waiting ones in the order they will be served."""
        now = time.monotonic()
        out = [
            QueueRow(team, self._infos[sid].label, sid, "running", 0, 0.0, None)
            for team, sid in self._running.items()
        ]
        for place, w in enumerate(fairqueue.order(self._waiting, self._running), start=1):
            _, wait = self.position(w.submission_id)
            waited = now - self._queued_at[w.submission_id]
            label = self._infos[w.submission_id].label
            out.append(QueueRow(w.team, label, w.submission_id, "waiting", place, waited, wait))
        return out

    def _pump(self) -> None:
        while len(self._running) < self.slots:
            chosen = fairqueue.next_up(self._waiting, self._running)
            if chosen is None:
                break
            self._waiting.remove(chosen)
            self._running[chosen.team] = chosen.submission_id
            self._start(self._validate(chosen))
        set_validation_queue(len(self._waiting), len(self._running))

    def _start(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _validate(self, chosen: Waiting) -> None:
        sid = chosen.submission_id
        waited = time.monotonic() - self._queued_at[sid]
        self.longest_wait_s = max(self.longest_wait_s, waited)
        observe_validation("queue_wait", waited)
        started = time.monotonic()
        try:
            await self._settle(sid, self._run(self._infos[sid]))
        finally:
            self.durations.append(time.monotonic() - started)
            observe_validation("full", self.durations[-1])
            del self._running[chosen.team]
            self._pump()

    async def _replace(self, sid: int, newer: SubmissionInfo) -> None:
        log.info("validation_superseded", bot=self._infos[sid].label, by=newer.label)
        await self._settle(sid, self._supersede(self._infos[sid], newer))

    async def _settle(self, sid: int, work: Awaitable[SubmissionInfo]) -> None:
        future = self._futures.pop(sid)
        try:
            result = await work
        except BaseException as exc:
            if not future.done():
                future.set_exception(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
            log.exception("validation_crashed", submission_id=sid)
        else:
            if not future.done():
                future.set_result(result)
        finally:
            self._infos.pop(sid, None)
            self._queued_at.pop(sid, None)

    async def drain(self) -> None:
        """Wait until nothing is queued or running (server shutdown, tests)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
