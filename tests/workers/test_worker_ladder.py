"""The ladder of submitted bots on PostgreSQL: the server picks the pair and enqueues a job, a
``referee worker`` plays it and stores it once as a rated ladder game naming both versions."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest
from workers_helpers import GREEDY, RANDOM, TURN_LIMIT, log_lines, start_worker, stop_workers

from engine.adjudication.verdicts import Verdict
from engine.registry import load_game
from referee.hosting.autoplay import AutoplaySettings, SubmittedLadder
from referee.hosting.casual import CasualRecorder
from referee.match.clock import TimeControl
from referee.storage import BotVersionInfo, Repository, SourceKind
from referee.storage import submissions as rows
from referee.storage.submissions import NewVersion
from referee.tournament.ladder import METHOD
from referee.workers.dispatch import QueueDispatcher
from referee.workers.ladderjob import ladder_job_kwargs

pytestmark = pytest.mark.slow


def _accepted(repo: Repository, owner: str, bot: str, module: str, char: str) -> int:
    """An accepted submitted version of ``bot`` whose code is the example ``module``."""
    repo.create_player(owner)
    digest = char * 64
    info, _ = rows.record_submission(
        repo.db,
        NewVersion(owner, bot, digest[:12], digest, SourceKind.SDK_MODULE, module, 1, 1, 1),
    )
    rows.finish_validation(repo.db, info.id, accepted=True, reason="validated")
    return info.bot_version_id


def _ladder(repo: Repository, url: str) -> SubmittedLadder:
    settings = AutoplaySettings(
        game=load_game("tetress", turn_limit=TURN_LIMIT),
        time_control=TimeControl(game_time_s=60.0, grace_s=1.0),
        memory_mb=None,
        # One game now, the next an hour later: the test sees exactly one job.
        games_per_hour=1,
    )
    return SubmittedLadder(repo, settings, CasualRecorder(repo), queue=QueueDispatcher(repo, url))


async def _one_ladder_game(ladder: SubmittedLadder) -> None:
    task = asyncio.create_task(ladder.run())
    try:
        async with asyncio.timeout(90):
            while ladder.stored < 1:
                assert not task.done(), task
                await asyncio.sleep(0.2)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await ladder.drain(5)


def test_ladder_games_are_enqueued_and_played_by_a_worker(pg_url: str, tmp_path: Path) -> None:
    """On PostgreSQL the ladder plays nothing itself: it enqueues one job for the pair it
    picks, a worker plays it, and the game is stored once as a rated ladder game naming both
    exact accepted versions (the ladder then rates both)."""
    repo = Repository.open(pg_url)
    ids = {_accepted(repo, "alice", "ann", RANDOM, "a"), _accepted(repo, "bob", "bo", GREEDY, "b")}
    worker = start_worker(pg_url, tmp_path / "w1.log")
    try:
        ladder = _ladder(repo, pg_url)
        asyncio.run(_one_ladder_game(ladder))
    finally:
        stop_workers([worker])
    games = repo.list_games(limit=None)
    assert len(games) == 1
    game = games[0]
    assert {s.bot_version_id for s in game.seats} == ids
    assert game.counted and game.verdict is not Verdict.ABORTED and game.plies > 0
    assert game.tournament_id is None and game.sandbox in ("bwrap", "none")
    assert '[Event "ladder"]' in (repo.get_game(game.uid).record_text or "")
    played = [line for line in log_lines(tmp_path / "w1.log") if line["event"] == "game_started"]
    assert [line["game_id"] for line in played] == [game.uid] and played[0]["job_id"]
    table = repo.latest_ratings(METHOD, ladder="main")
    assert table is not None and {r.bot_version_id for r in table.rows} == ids
    repo.close()


async def _enqueue_twice(repo: Repository, url: str, seats: list[BotVersionInfo]) -> list[str]:
    kwargs = ladder_job_kwargs(
        "dup0ladder0key00", load_game("tetress", turn_limit=TURN_LIMIT), seats,
        TimeControl(game_time_s=60.0, grace_s=1.0), None, 30.0,
    )  # fmt: skip
    async with QueueDispatcher(repo, url) as queue:
        jobs = [await queue.enqueue_ladder(kwargs), await queue.enqueue_ladder(kwargs)]
        async with asyncio.timeout(90):
            return [await queue.wait(j) for j in jobs]


def test_a_ladder_key_enqueued_twice_records_one_game(pg_url: str, tmp_path: Path) -> None:
    """Two jobs carrying the same game key both finish, but the games table holds that game
    once: the second job finds it stored and records nothing."""
    repo = Repository.open(pg_url)
    a = _accepted(repo, "alice", "ann", RANDOM, "a")
    b = _accepted(repo, "bob", "bo", GREEDY, "b")
    seats = [repo.get_bot_version(a), repo.get_bot_version(b)]
    worker = start_worker(pg_url, tmp_path / "w1.log")
    try:
        states = asyncio.run(_enqueue_twice(repo, pg_url, seats))
    finally:
        stop_workers([worker])
    assert states == ["succeeded", "succeeded"]
    games = repo.list_games(limit=None)
    assert [g.uid for g in games] == ["dup0ladder0key00"]
    assert [s.bot_version_id for s in games[0].seats] == [a, b]
    events = [line["event"] for line in log_lines(tmp_path / "w1.log")]
    assert events.count("game_started") == 1 and events.count("job_already_done") == 1
    repo.close()


#: The ladder runs uploads; uncontained only with the explicit allowance.
UNSANDBOXED = ("--no-sandbox", "--allow-unsandboxed-uploads")


def _serve_ladder(url: str, tmp_path: Path, *extra: str) -> bool:
    """Whether the ladder `referee serve --submissions --db url` starts has a job queue."""
    from referee.commands._serve_config import serve_config
    from referee.commands._uploads import start_ladder
    from referee.commands.main import build_parser

    argv = ["serve", "--db", url, "--submissions", str(tmp_path / "store"), *extra]
    args = build_parser().parse_args(argv)
    repo = Repository.open(url)
    game = load_game("tetress", turn_limit=TURN_LIMIT)

    async def start() -> bool:
        config = serve_config(args)
        started = start_ladder(config, repo, CasualRecorder(repo), None, game, TimeControl())
        assert started is not None
        ladder, task = started
        await asyncio.sleep(0)  # the ladder's task takes its first step (opens its queue)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await ladder.drain(1)
        return ladder.queue is not None

    try:
        return asyncio.run(start())
    finally:
        repo.close()


def test_serve_enqueues_ladder_games_on_postgresql_only(pg_url: str, tmp_path: Path) -> None:
    """`referee serve --submissions` gives the ladder the job queue on a PostgreSQL --db, and
    keeps playing in-process on SQLite or with --in-process."""
    assert _serve_ladder(pg_url, tmp_path, *UNSANDBOXED)
    assert not _serve_ladder(pg_url, tmp_path, *UNSANDBOXED, "--in-process")
    assert not _serve_ladder(str(tmp_path / "arena.db"), tmp_path, *UNSANDBOXED)


#: A hang detector, not a timing: every task must have ended by then once cancelled.
TASKS_END_WITHIN_S = 30.0


async def _until_a_task_named(part: str) -> None:
    """Wait until a task whose name holds ``part`` runs (psycopg names its pool's tasks)."""
    while not any(part in t.get_name() for t in asyncio.all_tasks()):
        await asyncio.sleep(0)


def test_every_task_of_the_ladder_and_its_queue_ends_when_cancelled_while_opening(
    pg_url: str, tmp_path: Path
) -> None:
    """The ladder cancelled while its queue's connection pool is still opening (the shutdown
    of `referee serve` right after it started) leaves no task behind: each task the ladder,
    the queue and psycopg's pool started ends once cancelled (the pool was left open, and its
    tasks treat a cancellation as a failed connection and go on, so asyncio.run never
    returned)."""
    repo = Repository.open(pg_url)

    async def scenario() -> list[str]:
        ladder = _ladder(repo, pg_url)
        task = asyncio.create_task(ladder.run())
        await _until_a_task_named("-worker-")
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await ladder.drain(1)
        others = asyncio.all_tasks() - {asyncio.current_task()}
        for other in others:
            other.cancel()
        _, pending = await asyncio.wait(others, timeout=TASKS_END_WITHIN_S) if others else ((), ())
        return sorted(t.get_name() for t in pending)

    try:
        assert asyncio.run(scenario()) == []
    finally:
        repo.close()
