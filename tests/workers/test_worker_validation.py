"""Validation on the workers: with a live ``referee worker`` on PostgreSQL, an upload's first
check and full games are its jobs; the fair queue still decides their order; a worker that
dies mid-validation has its job retried and the verdict is recorded once; with no worker left
alive, the server takes the step back and records the verdict itself, once."""

from __future__ import annotations

import asyncio
import io
import signal
import zipfile
from pathlib import Path
from typing import Any

import psycopg
import pytest
import structlog
from workers_helpers import log_lines, start_worker, stop_workers

from referee.match.clock import TimeControl
from referee.storage import Repository
from referee.storage import submissions as rows
from referee.storage.enums import SubmissionStatus
from referee.storage.submissions import AlreadyJudged, SubmissionInfo
from referee.submissions.offload import FULL_STEP
from referee.submissions.service import Submissions
from referee.submissions.store import SubmissionStore
from referee.submissions.validate import ValidationResult, ValidationSettings
from referee.telemetry.metrics import REGISTRY
from referee.workers import QUEUES
from referee.workers.job import LeaseLost, lease_guard
from referee.workers.queue import conninfo, ensure_schema, live_workers
from referee.workers.validationjob import PRIORITY, VALIDATION_KEY, QueuedValidation

pytestmark = pytest.mark.slow

VALIDATION = ValidationSettings(
    game="tetress", game_params={"turn_limit": 16}, time_control=TimeControl(game_time_s=60)
)
BOT = """
import random
import time

from client_sdk import Agent


class Bot(Agent):
    def choose_move(self, state, clocks):
        time.sleep({pause})  # {tag}
        return random.choice(list(state.legal_moves))
"""


def _archive(tag: str, pause: float = 0.0) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.py", BOT.format(pause=pause, tag=tag))
    return buffer.getvalue()


class _AlwaysAlive(QueuedValidation):
    """Jobs are enqueued whether or not a worker runs (the test plays the worker)."""

    async def available(self) -> bool:
        return True


async def _jobs(url: str) -> list[tuple[int, dict[str, Any], str, int, int]]:
    """Every job: id, arguments, status, priority, attempts (oldest first)."""
    async with await psycopg.AsyncConnection.connect(conninfo(url)) as conn:
        cur = await conn.execute(
            "SELECT id, args, status::text, priority, attempts FROM procrastinate_jobs ORDER BY id"
        )
        return [tuple(row) for row in await cur.fetchall()]  # type: ignore[misc]


async def _until(check: Any, timeout_s: float = 90.0) -> Any:
    async with asyncio.timeout(timeout_s):
        while not (found := await check()):
            await asyncio.sleep(0.1)
        return found


def test_an_upload_is_validated_by_a_worker(pg_url: str, tmp_path: Path) -> None:
    """With a worker alive, both steps run on it (the server plays nothing): the student gets
    the same two verdicts as from the server, and the validation games are kept."""
    repo = Repository.open(pg_url)
    repo.create_player("alice")
    store = SubmissionStore(tmp_path / "store")
    worker = start_worker(pg_url, tmp_path / "w1.log")

    async def main() -> Any:
        offload = QueuedValidation(repo, pg_url, str(store.root), VALIDATION, stall_timeout_s=3)
        submissions = Submissions(repo, store, validation=VALIDATION, offload=offload)
        try:
            await _until(offload.available)
            return await submissions.submit("alice", _archive("one"))
        finally:
            await submissions.close()

    try:
        result = asyncio.run(main())
    finally:
        stop_workers([worker])
    assert result.status is SubmissionStatus.ACCEPTED, result
    assert result.reason.startswith("every validation game ended without a fault"), result
    recorded = [
        line["step"]
        for line in log_lines(tmp_path / "w1.log")
        if line["event"] == "validation_recorded"
    ]
    assert recorded == ["first", "full"]
    games = repo.list_games(include_validation=True)
    assert len(games) == 2 and all(g.plies > 0 for g in games)
    info = rows.get_submission(repo.db, result.bot, result.version)
    assert info.validation_game_uid in {g.uid for g in games}
    repo.close()


def test_the_fair_queue_orders_the_workers_jobs(pg_url: str, tmp_path: Path) -> None:
    """Two slots: alice's first version is a job at once, her second waits while it runs
    (bob's takes the other slot), her third replaces her second (never a job), and is a job
    only once her first has ended; each verdict is the one its job recorded."""
    repo = Repository.open(pg_url)
    for name in ("alice", "bob"):
        repo.create_player(name)
    store = SubmissionStore(tmp_path / "store")

    async def finish(job_id: int, sid: int) -> None:
        """What a worker does: record the verdict, then end the job."""
        rows.finish_validation(repo.db, sid, accepted=True, reason=f"job {job_id}", once=True)
        async with await psycopg.AsyncConnection.connect(conninfo(pg_url)) as conn:
            await conn.execute(
                "UPDATE procrastinate_jobs SET status = 'succeeded' WHERE id = %s", (job_id,)
            )

    def sids(jobs: list[tuple[int, dict[str, Any], str, int, int]]) -> list[int]:
        return [int(args[VALIDATION_KEY]) for _, args, *_ in jobs]

    async def main() -> list[SubmissionInfo]:
        await ensure_schema(pg_url)
        offload = _AlwaysAlive(repo, pg_url, str(store.root), VALIDATION)
        submissions = Submissions(
            repo, store, validation=VALIDATION, offload=offload, concurrency=2
        )
        received = [
            await submissions.receive(team, _archive(tag))
            for team, tag in (("alice", "a1"), ("alice", "a2"), ("bob", "b1"), ("alice", "a3"))
        ]
        a1, _, b1, a3 = (info.id for info in received)
        try:
            futures = [submissions.queue.put(received[0])]
            await _until(lambda: _count(pg_url, 1))
            futures += [submissions.queue.put(info) for info in received[1:]]
            jobs = await _until(lambda: _count(pg_url, 2))
            assert sids(jobs) == [a1, b1]
            assert {p for _, _, _, p, _ in jobs} == {PRIORITY[FULL_STEP]}
            replaced = await futures[1]
            assert replaced.status is SubmissionStatus.REJECTED
            assert "replaced it in the queue" in replaced.reason
            await finish(jobs[1][0], b1)
            await futures[2]
            assert sids(await _jobs(pg_url)) == [a1, b1]  # alice's third waits for her first
            await finish(jobs[0][0], a1)
            jobs = await _until(lambda: _count(pg_url, 3))
            assert sids(jobs) == [a1, b1, a3]
            await finish(jobs[2][0], a3)
            return list(await asyncio.gather(*futures))
        finally:
            await submissions.close()

    done = asyncio.run(main())
    assert [d.status.value for d in done] == ["accepted", "rejected", "accepted", "accepted"]
    assert [d.reason.startswith("job ") for d in done] == [True, False, True, True]
    repo.close()


async def _count(url: str, n: int) -> list[tuple[int, dict[str, Any], str, int, int]] | None:
    jobs = await _jobs(url)
    return jobs if len(jobs) >= n else None


def test_a_worker_dying_mid_validation_hands_it_on_and_the_verdict_is_recorded_once(
    pg_url: str, tmp_path: Path
) -> None:
    """The worker validating a version is killed mid-game: the other worker finds its
    heartbeat stopped, the job is retried (one more attempt), and the verdict is the other
    worker's, recorded once; the dead worker's late result would be refused, and so is a
    duplicate."""
    repo = Repository.open(pg_url)
    repo.create_player("alice")
    store = SubmissionStore(tmp_path / "store")
    # Both alive before either dies: with no worker left, the server would take the step
    # back instead of waiting for a replay.
    logs = [tmp_path / "w1.log", tmp_path / "w2.log"]
    workers = [start_worker(pg_url, log) for log in logs]

    def started(log: Path) -> bool:
        return any(line["event"] == "validation_started" for line in log_lines(log))

    async def main() -> tuple[SubmissionInfo, int, int]:
        offload = QueuedValidation(repo, pg_url, str(store.root), VALIDATION, stall_timeout_s=3)
        submissions = Submissions(repo, store, validation=VALIDATION, offload=offload)
        task = None
        try:
            await _until(lambda: _alive(pg_url, 2))
            # Slow moves: the game lasts seconds, so the worker dies in the middle of it.
            info = await submissions.receive("alice", _archive("slow", pause=0.4))
            task = asyncio.create_task(submissions.validate(info))

            async def running() -> int | None:
                return next((i + 1 for i, log in enumerate(logs) if started(log)), None)

            victim = await _until(running) - 1
            ((job_id, _, _, _, _),) = await _jobs(pg_url)
            holder = await _holder(pg_url, job_id)
            workers[victim].send_signal(signal.SIGKILL)
            workers[victim].wait(10)
            async with asyncio.timeout(120):
                judged = await task
            return judged, holder, victim
        finally:
            if task is not None and not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            await submissions.close()

    try:
        judged, dead_worker, victim = asyncio.run(main())
    finally:
        stop_workers(workers)
    assert judged.status is SubmissionStatus.ACCEPTED, judged
    ((job_id, _, status, _, attempts),) = asyncio.run(_jobs(pg_url))
    # Two attempts counted: the killed worker's (handed on) and the other worker's.
    assert status == "succeeded" and attempts == 2
    survivor_log = log_lines(logs[1 - victim])
    assert [line["event"] for line in survivor_log].count("validation_recorded") == 1
    dead_log = log_lines(logs[victim])
    assert not any(line["event"] == "validation_recorded" for line in dead_log)
    _late_results_are_refused(repo, store, judged, job_id, dead_worker)
    repo.close()


def _late_results_are_refused(
    repo: Repository, store: SubmissionStore, judged: SubmissionInfo, job_id: int, dead: int
) -> None:
    """The dead worker's late result is refused by its lost lease, a second verdict by the one
    already recorded, and the version stays accepted."""
    submissions = Submissions(repo, store, validation=VALIDATION)
    late = ValidationResult(False, "a late result")
    with pytest.raises(LeaseLost):
        asyncio.run(submissions.record(judged, late, lease_guard(job_id, dead)))
    with pytest.raises(AlreadyJudged):
        asyncio.run(submissions.record(judged, late))
    assert rows.submission_by_id(repo.db, judged.id).status is SubmissionStatus.ACCEPTED


async def _alive(url: str, n: int) -> bool:
    """Whether ``n`` worker processes sent a heartbeat within the last 3 s (the tests' stall
    timeout): each registers two procrastinate workers, its general one and its first
    checks' one."""
    await ensure_schema(url)
    async with await psycopg.AsyncConnection.connect(conninfo(url)) as conn:
        return await live_workers(conn, 3.0) >= 2 * n


async def _holder(url: str, job_id: int) -> int:
    """The worker id a running job is held by (once it has one)."""

    async def held() -> int | None:
        async with await psycopg.AsyncConnection.connect(conninfo(url)) as conn:
            cur = await conn.execute(
                "SELECT worker_id FROM procrastinate_jobs WHERE id = %s", (job_id,)
            )
            row = await cur.fetchone()
            return None if row is None or row[0] is None else int(row[0])

    found: int = await _until(held)
    return found


def test_validation_goes_to_the_workers_only_while_one_is_alive(
    pg_url: str, tmp_path: Path
) -> None:
    """No worker has sent a heartbeat: the server validates itself; a worker's heartbeat
    within the stall timeout sends the steps to the queue; an old one does not."""
    repo = Repository.open(pg_url)
    store = SubmissionStore(tmp_path / "store")

    async def alive(heartbeat_age_s: float | None) -> bool:
        await ensure_schema(pg_url)
        if heartbeat_age_s is not None:
            async with await psycopg.AsyncConnection.connect(
                conninfo(pg_url), autocommit=True
            ) as conn:
                await conn.execute("DELETE FROM procrastinate_workers")
                await conn.execute(
                    "INSERT INTO procrastinate_workers (last_heartbeat) "
                    "VALUES (now() - make_interval(secs => %s))",
                    (heartbeat_age_s,),
                )
        offload = QueuedValidation(repo, pg_url, str(store.root), VALIDATION, stall_timeout_s=30)
        try:
            return await offload.available()
        finally:
            await offload.close()

    assert asyncio.run(alive(None)) is False
    assert asyncio.run(alive(1.0)) is True
    assert asyncio.run(alive(3600.0)) is False
    repo.close()


def _taken_back() -> float:
    """This process's count of validation jobs taken back from the workers (either queue)."""
    values = [
        REGISTRY.get_sample_value(
            "tetromino_jobs_finished_total", {"queue": queue, "outcome": "taken_back"}
        )
        for queue in QUEUES
    ]
    return sum(value or 0.0 for value in values)


def _worker_steps(log: Path, event: str) -> list[tuple[int, str]]:
    """``(submission id, step)`` of each ``event`` line a worker logged."""
    return [
        (line["submission_id"], line["step"]) for line in log_lines(log) if line["event"] == event
    ]


def test_a_step_queued_when_the_last_worker_goes_silent_is_run_by_the_server_once(
    pg_url: str, tmp_path: Path
) -> None:
    """The only worker is stopped (SIGSTOP) with a first check queued for it: past the stall
    timeout the server takes the job back (cancelled, logged and counted) and validates the
    upload itself; woken, the worker takes the next job but never that one."""
    repo = Repository.open(pg_url)
    for name in ("alice", "bob"):
        repo.create_player(name)
    store = SubmissionStore(tmp_path / "store")
    worker = start_worker(pg_url, tmp_path / "w1.log")
    counted = _taken_back()

    async def main() -> tuple[SubmissionInfo, SubmissionInfo, list[Any]]:
        offload = QueuedValidation(repo, pg_url, str(store.root), VALIDATION, stall_timeout_s=4)
        submissions = Submissions(repo, store, validation=VALIDATION, offload=offload)
        try:
            info = await submissions.receive("alice", _archive("alice"))
            later = await submissions.receive("bob", _archive("bob"))
            await _until(offload.available)
            worker.send_signal(signal.SIGSTOP)
            with structlog.testing.capture_logs() as logs:
                async with asyncio.timeout(120):
                    checked, full = await submissions.check_and_queue(info)
                    assert full is not None, checked
                    judged = await full
            worker.send_signal(signal.SIGCONT)
            await _until(offload.available)
            bob, passed = await submissions.first_check(later)  # the woken worker's job
            assert passed, bob
            return judged, bob, logs
        finally:
            await submissions.close()

    try:
        judged, bob, logs = asyncio.run(main())
    finally:
        stop_workers([worker])
    assert judged.status is SubmissionStatus.ACCEPTED, judged
    taken = [e for e in logs if e["event"] == "validation_taken_back"]
    assert [(e["step"], e["job_status"]) for e in taken] == [("first", "todo")]
    assert _taken_back() == counted + 1
    # Alice's first check was cancelled unrun; her full games never became a job.
    jobs = asyncio.run(_jobs(pg_url))
    assert [(args[VALIDATION_KEY], args["step"], status) for _, args, status, *_ in jobs] == [
        (judged.id, "first", "cancelled"),
        (bob.id, "first", "succeeded"),
    ]
    log = tmp_path / "w1.log"
    assert _worker_steps(log, "validation_started") == [(bob.id, "first")]
    assert _worker_steps(log, "validation_recorded") == [(bob.id, "first")]
    repo.close()


def test_a_step_running_when_the_last_worker_dies_is_finished_by_the_server_once(
    pg_url: str, tmp_path: Path
) -> None:
    """The only worker is killed mid-validation and none is left to replay it: past the stall
    timeout the server takes the job back (aborted) and plays the full games itself; a worker
    started afterwards takes the next job but not that one, the dead worker's late result is
    refused by its lease, and a duplicate by the verdict."""
    repo = Repository.open(pg_url)
    for name in ("alice", "bob"):
        repo.create_player(name)
    store = SubmissionStore(tmp_path / "store")
    first = start_worker(pg_url, tmp_path / "w1.log")
    second = None
    counted = _taken_back()

    async def running() -> bool:
        return bool(_worker_steps(tmp_path / "w1.log", "validation_started"))

    async def main() -> tuple[SubmissionInfo, SubmissionInfo, int, int, list[Any]]:
        nonlocal second
        offload = QueuedValidation(repo, pg_url, str(store.root), VALIDATION, stall_timeout_s=3)
        submissions = Submissions(repo, store, validation=VALIDATION, offload=offload)
        task = None
        try:
            # Slow moves: the game lasts seconds, so the worker dies in the middle of it.
            info = await submissions.receive("alice", _archive("slow", pause=0.4))
            later = await submissions.receive("bob", _archive("bob"))
            await _until(offload.available)
            with structlog.testing.capture_logs() as logs:
                task = asyncio.create_task(submissions.validate(info))
                await _until(running)
                ((job_id, *_),) = await _jobs(pg_url)
                holder = await _holder(pg_url, job_id)
                first.send_signal(signal.SIGKILL)
                first.wait(10)
                async with asyncio.timeout(120):
                    judged = await task
            second = start_worker(pg_url, tmp_path / "w2.log")
            await _until(offload.available)
            bob, passed = await submissions.first_check(later)  # the new worker's job
            assert passed, bob
            return judged, bob, job_id, holder, logs
        finally:
            if task is not None and not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            await submissions.close()

    try:
        judged, bob, job_id, dead_worker, logs = asyncio.run(main())
    finally:
        stop_workers([first] + ([second] if second is not None else []))
    assert judged.status is SubmissionStatus.ACCEPTED, judged
    assert judged.reason.startswith("every validation game ended without a fault"), judged
    taken = [e for e in logs if e["event"] == "validation_taken_back"]
    assert [(e["step"], e["job_status"], e["job_id"]) for e in taken] == [("full", "doing", job_id)]
    assert _taken_back() == counted + 1
    jobs = asyncio.run(_jobs(pg_url))
    assert [(args[VALIDATION_KEY], args["step"], status) for _, args, status, *_ in jobs] == [
        (judged.id, "full", "aborted"),
        (bob.id, "first", "succeeded"),
    ]
    assert _worker_steps(tmp_path / "w1.log", "validation_recorded") == []
    assert _worker_steps(tmp_path / "w2.log", "validation_started") == [(bob.id, "first")]
    _late_results_are_refused(repo, store, judged, job_id, dead_worker)
    repo.close()


def test_a_restarted_server_takes_over_the_step_its_previous_run_left_queued(
    pg_url: str, tmp_path: Path, info_logs: None
) -> None:
    """A server stops with first checks queued and no worker yet; started again with none
    alive, it adopts the leftover job of the version still validating and takes it back
    (cancelled, never run) to validate the version itself, once; the waiting job of a version
    judged meanwhile is cancelled; a worker started afterwards runs the next job but neither
    leftover, and nothing is logged as a crash or a duplicate."""
    repo = Repository.open(pg_url)
    for name in ("alice", "carol", "dave"):
        repo.create_player(name)
    store = SubmissionStore(tmp_path / "store")
    worker = None

    async def stopped() -> list[SubmissionInfo]:
        """The first run: both first checks become jobs, then the server stops."""
        await ensure_schema(pg_url)
        offload = _AlwaysAlive(repo, pg_url, str(store.root), VALIDATION)
        submissions = Submissions(repo, store, validation=VALIDATION, offload=offload)
        infos = [await submissions.receive(team, _archive(team)) for team in ("alice", "carol")]
        checks = [asyncio.create_task(submissions.first_check(info)) for info in infos]
        try:
            await _until(lambda: _count(pg_url, 2))
        finally:
            for check in checks:
                check.cancel()
            await asyncio.gather(*checks, return_exceptions=True)
            await submissions.close()
        return infos

    async def restarted() -> tuple[int, SubmissionInfo, list[Any]]:
        nonlocal worker
        offload = QueuedValidation(repo, pg_url, str(store.root), VALIDATION, stall_timeout_s=3)
        submissions = Submissions(repo, store, validation=VALIDATION, offload=offload)
        try:
            with structlog.testing.capture_logs() as logs:
                async with asyncio.timeout(120):
                    resumed = await submissions.resume()
                worker = start_worker(pg_url, tmp_path / "w1.log")
                await _until(offload.available)
                later = await submissions.receive("dave", _archive("dave"))
                dave, passed = await submissions.first_check(later)  # the worker's job
            assert passed, dave
            return resumed, dave, logs
        finally:
            await submissions.close()

    alice, carol = asyncio.run(stopped())
    # Carol's version is judged while no server runs (here by hand): her job is left over.
    rows.finish_validation(repo.db, carol.id, accepted=False, reason="judged meanwhile")
    counted = _taken_back()
    try:
        resumed, dave, logs = asyncio.run(restarted())
    finally:
        stop_workers([worker] if worker is not None else [])
    judged = rows.submission_by_id(repo.db, alice.id)
    assert resumed == 1
    assert judged.status is SubmissionStatus.ACCEPTED, judged
    assert judged.reason.startswith("every validation game ended without a fault"), judged
    assert rows.submission_by_id(repo.db, carol.id).reason == "judged meanwhile"
    events = [e["event"] for e in logs]
    assert not {"validation_crashed", "validation_duplicate_refused"} & set(events), events
    # One verdict for alice, the server's: the leftover job was taken back, never run.
    validated = [e for e in logs if e["event"] == "submission_validated"]
    assert [e["bot"] for e in validated] == [judged.label], (validated, events)
    adopted = [
        (e["submission_id"], e["step"]) for e in logs if e["event"] == "validation_job_adopted"
    ]
    assert adopted == [(alice.id, "first")]
    cancelled = [e["submission_id"] for e in logs if e["event"] == "validation_job_cancelled"]
    assert cancelled == [carol.id]
    taken = [(e["step"], e["job_status"]) for e in logs if e["event"] == "validation_taken_back"]
    assert taken == [("first", "todo")] and _taken_back() == counted + 1
    jobs = asyncio.run(_jobs(pg_url))
    assert [(args[VALIDATION_KEY], args["step"], status) for _, args, status, *_ in jobs] == [
        (alice.id, "first", "cancelled"),
        (carol.id, "first", "cancelled"),
        (dave.id, "first", "succeeded"),
    ]
    # The worker, started with both leftovers older than dave's job, touched neither.
    touched = {line.get("submission_id") for line in log_lines(tmp_path / "w1.log")}
    assert touched - {None} == {dave.id}
    repo.close()
