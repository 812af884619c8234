"""The slot each worker keeps for uploads' first checks, with a real ``referee worker`` on
PostgreSQL whose one general slot plays a game held mid-move (its bot waits for a file the
test writes): a first check is taken and finished by the kept slot while that game still
runs, a full validation never takes it, and SIGTERM lets both slots' jobs finish and ends
both of the worker's procrastinate workers."""

from __future__ import annotations

import asyncio
import io
import signal
import zipfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import psycopg
import pytest
from workers_helpers import RANDOM, log_lines, make_tournament, start_worker, stop_workers

from referee.match.clock import TimeControl
from referee.storage import Repository, TournamentStatus
from referee.storage import submissions as rows
from referee.storage.enums import SubmissionStatus
from referee.submissions.offload import FIRST_STEP, FULL_STEP
from referee.submissions.service import Submissions
from referee.submissions.store import SubmissionStore
from referee.submissions.validate import ValidationSettings
from referee.tournament.runner import TournamentRunner
from referee.workers import FIRST_CHECK_QUEUE, QUEUE
from referee.workers.dispatch import QueueDispatcher
from referee.workers.queue import conninfo
from referee.workers.validationjob import (
    PRIORITY,
    STEP_QUEUE,
    QueuedValidation,
    validation_job_kwargs,
    validation_lock,
)

pytestmark = pytest.mark.slow

#: Long clocks: a held bot's clock runs while it waits, and the test decides how long.
VALIDATION = ValidationSettings(
    game="tetress", game_params={"turn_limit": 8}, time_control=TimeControl(game_time_s=600)
)
#: A bot whose first move waits until ``release`` exists (each copy first leaves a file named
#: by its pid in ``held``, for the test to know it is held); a random mover otherwise.
HELD_BOT = """
import os
import pathlib
import random
import time

from client_sdk import Agent


class Bot(Agent):
    held = False

    def choose_move(self, state, clocks):
        if not self.held:
            self.held = True
            pathlib.Path({held!r}, str(os.getpid())).touch()
            while not os.path.exists({release!r}):
                time.sleep(0.05)
        return random.choice(list(state.legal_moves))
"""
QUICK_BOT = """
import random

from client_sdk import Agent


class Bot(Agent):
    def choose_move(self, state, clocks):
        return random.choice(list(state.legal_moves))  # {tag}
"""
#: The worker runs uploads uncontained, so that a held bot sees the test's files.
UNCONTAINED = ("--no-sandbox", "--allow-unsandboxed-uploads", "--shutdown-grace", "600")

Job = tuple[int, dict[str, Any], str, str, int | None]


class Hold:
    """A held bot's two files: where its copies say they wait, and the release."""

    def __init__(self, root: Path, name: str) -> None:
        self.held = root / f"{name}-held"
        self.held.mkdir()
        self.release = root / f"{name}-release"

    def source(self) -> str:
        return HELD_BOT.format(held=str(self.held), release=str(self.release))

    async def waiting(self) -> bool:
        return any(self.held.iterdir())

    def let_go(self) -> None:
        self.release.touch()


def _archive(source: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.py", source)
    return buffer.getvalue()


async def _until(check: Callable[[], Coroutine[Any, Any, Any]], timeout_s: float = 120.0) -> Any:
    async with asyncio.timeout(timeout_s):
        while not (found := await check()):
            await asyncio.sleep(0.1)
        return found


async def _jobs(url: str) -> list[Job]:
    """Every job: id, arguments, status, queue, worker id (oldest first)."""
    async with await psycopg.AsyncConnection.connect(conninfo(url)) as conn:
        cur = await conn.execute(
            "SELECT id, args, status::text, queue_name, worker_id FROM procrastinate_jobs "
            "ORDER BY id"
        )
        return [tuple(row) for row in await cur.fetchall()]


async def _game_job(url: str) -> Job | None:
    """The tournament game's job once a worker runs it."""
    found = [j for j in await _jobs(url) if "pairing_id" in j[1] and j[2] == "doing"]
    return found[0] if found else None


async def _job_of(url: str, submission_id: int, step: str) -> Job:
    """The one job of ``step`` of the version ``submission_id``."""
    found = [j for j in await _jobs(url) if j[1].get("step") == step and _sid(j) == submission_id]
    assert len(found) == 1, found
    return found[0]


def _sid(job: Job) -> int | None:
    value = job[1].get("validation_submission_id")
    return None if value is None else int(value)


def _setup(pg_url: str, tmp_path: Path) -> tuple[Repository, SubmissionStore, Hold, str]:
    """Players, a store, and a one-game tournament whose first seat is held (its name)."""
    repo = Repository.open(pg_url)
    for name in ("alice", "bob"):
        repo.create_player(name)
    game_hold = Hold(tmp_path, "game")
    bot = tmp_path / "held_bot.py"
    bot.write_text(game_hold.source())
    make_tournament(repo, "held", [str(bot), RANDOM], games_per_pairing=1, per_game=600.0)
    return repo, SubmissionStore(tmp_path / "store"), game_hold, "held"


async def _run_tournament(repo: Repository, url: str, name: str) -> None:
    async with QueueDispatcher(repo, url) as queue:
        await TournamentRunner(repo, name, queue=queue, ladder=None).run()


def test_a_first_check_takes_the_kept_slot_while_the_game_slots_are_held(
    pg_url: str, tmp_path: Path
) -> None:
    """The worker's one general slot plays a held game; a full validation waits on the game
    queue, at a priority above first checks' (a slot that served that queue would take it
    first); an upload's first check is then taken by the kept slot (another procrastinate
    worker than the game's) and its verdict recorded while the game is still held, and the
    full validation is still waiting."""
    repo, store, game_hold, name = _setup(pg_url, tmp_path)
    worker = start_worker(pg_url, tmp_path / "w1.log", extra=UNCONTAINED)

    async def main() -> tuple[Job, Job, Job, Job, bool, bool]:
        runner = asyncio.create_task(_run_tournament(repo, pg_url, name))
        offload = QueuedValidation(repo, pg_url, str(store.root), VALIDATION, stall_timeout_s=3)
        submissions = Submissions(repo, store, validation=VALIDATION, offload=offload)
        try:
            await _until(game_hold.waiting)
            game = await _until(lambda: _game_job(pg_url))
            await _until(offload.available)
            waiting = await submissions.receive("alice", _archive(QUICK_BOT.format(tag="a")))
            async with QueueDispatcher(repo, pg_url) as queue:
                await queue.enqueue_keyed(
                    validation_job_kwargs(waiting.id, FULL_STEP, str(store.root), VALIDATION),
                    validation_lock(waiting.id),
                    priority=PRIORITY[FIRST_STEP] + 10,
                    match={"step": FULL_STEP},
                    queue=STEP_QUEUE[FULL_STEP],
                )
                upload = await submissions.receive("bob", _archive(QUICK_BOT.format(tag="b")))
                async with asyncio.timeout(120):
                    _, passed = await submissions.first_check(upload)
                checked = await _job_of(pg_url, upload.id, FIRST_STEP)
                full = await _job_of(pg_url, waiting.id, FULL_STEP)
                game_then = next(j for j in await _jobs(pg_url) if j[0] == game[0])
                # Not played later either: the job is withdrawn before the game is let go.
                withdrawn = await queue.cancel_waiting(full[0])
            game_hold.let_go()
            async with asyncio.timeout(120):
                await runner
            return game, game_then, checked, full, passed, withdrawn
        finally:
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)
            await submissions.close()

    try:
        game, game_then, checked, full, passed, withdrawn = asyncio.run(main())
    finally:
        stop_workers([worker])
    assert full[2] == "todo" and full[3] == QUEUE and withdrawn
    assert game_then[2] == "doing" and game_then[3] == QUEUE  # still held
    assert checked[2] == "succeeded" and checked[3] == FIRST_CHECK_QUEUE
    assert checked[4] is not None and checked[4] != game[4]
    assert passed
    assert repo.get_tournament(name).status is TournamentStatus.FINISHED
    assert worker.returncode == 0
    repo.close()


def test_sigterm_lets_both_slots_finish_and_ends_both_workers(pg_url: str, tmp_path: Path) -> None:
    """A held game in the general slot and a held first check in the kept one: SIGTERM
    (one signal for both of the worker's procrastinate workers) lets both finish once let
    go, the first verdict is recorded, both workers leave the workers' table, and the
    process exits 0."""
    repo, store, game_hold, name = _setup(pg_url, tmp_path)
    check_hold = Hold(tmp_path, "check")
    log = tmp_path / "w1.log"
    worker = start_worker(pg_url, log, extra=UNCONTAINED)

    async def stopping() -> bool:
        return any(line["event"] == "worker_stopping" for line in log_lines(log))

    async def main() -> tuple[Job, Job, bool, int]:
        runner = asyncio.create_task(_run_tournament(repo, pg_url, name))
        offload = QueuedValidation(repo, pg_url, str(store.root), VALIDATION, stall_timeout_s=3)
        submissions = Submissions(repo, store, validation=VALIDATION, offload=offload)
        check = None
        try:
            await _until(game_hold.waiting)
            game = await _until(lambda: _game_job(pg_url))
            await _until(offload.available)
            upload = await submissions.receive("alice", _archive(check_hold.source()))
            check = asyncio.create_task(submissions.first_check(upload))
            await _until(check_hold.waiting)
            checking = await _job_of(pg_url, upload.id, FIRST_STEP)
            worker.send_signal(signal.SIGTERM)
            await _until(stopping)
            game_hold.let_go()
            check_hold.let_go()
            async with asyncio.timeout(120):
                _, passed = await check
                await runner
            code = await asyncio.to_thread(worker.wait, 120)
            return game, checking, passed, code
        finally:
            for task in (runner, check):
                if task is not None:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
            await submissions.close()

    try:
        game, checking, passed, code = asyncio.run(main())
    finally:
        stop_workers([worker])
    assert checking[2] == "doing" and checking[4] != game[4]
    assert passed and code == 0
    states = {j[0]: j[2] for j in asyncio.run(_jobs(pg_url))}
    assert states[game[0]] == "succeeded" and states[checking[0]] == "succeeded"
    assert repo.get_tournament(name).status is TournamentStatus.FINISHED
    first = rows.submission_by_id(repo.db, checking[1]["validation_submission_id"])
    assert first.status is SubmissionStatus.VALIDATING
    assert asyncio.run(_workers(pg_url)) == 0
    stopping_lines = [line for line in log_lines(log) if line["event"] == "worker_stopping"]
    assert [line["reason"] for line in stopping_lines] == ["signal"]
    repo.close()


async def _workers(url: str) -> int:
    """The procrastinate workers registered (running or not cleaned up)."""
    async with await psycopg.AsyncConnection.connect(conninfo(url)) as conn:
        row = await (await conn.execute("SELECT count(*) FROM procrastinate_workers")).fetchone()
    assert row is not None
    return int(row[0])
