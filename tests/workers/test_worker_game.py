"""A game played by a ``referee worker`` process: enqueued by the runner, recorded once, logged
with its job and game ids."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from workers_helpers import GREEDY, RANDOM, log_lines, make_tournament, start_worker, stop_workers

from engine.adjudication.verdicts import Verdict
from referee.storage import Repository, TournamentStatus
from referee.tournament.runner import RunSummary, TournamentRunner
from referee.workers.dispatch import QueueDispatcher

pytestmark = pytest.mark.slow


async def _run_queued(repo: Repository, url: str, name: str) -> RunSummary:
    async with QueueDispatcher(repo, url) as queue:
        return await TournamentRunner(repo, name, queue=queue, ladder=None).run()


def test_worker_plays_and_records_queued_games(pg_url: str, tmp_path: Path) -> None:
    """With a queue the runner plays nothing itself: one worker takes both games of a pairing,
    plays them with launched bots and records each once; its log lines carry job and game id."""
    repo = Repository.open(pg_url)
    t = make_tournament(repo, "one", [RANDOM, GREEDY])
    worker = start_worker(pg_url, tmp_path / "w1.log")
    try:
        asyncio.run(asyncio.wait_for(_run_queued(repo, pg_url, "one"), 120))
    finally:
        stop_workers([worker])
    assert worker.returncode == 0
    assert repo.get_tournament(t.id).status is TournamentStatus.FINISHED
    games = repo.list_games(tournament_id=t.id)
    assert sorted(g.game_index for g in games) == [0, 1]
    assert all(g.counted and g.verdict is not Verdict.ABORTED and g.plies > 0 for g in games)
    assert all(g.sandbox in ("bwrap", "none") for g in games)
    started = [line for line in log_lines(tmp_path / "w1.log") if line["event"] == "game_started"]
    assert len(started) == 2
    assert all(line["job_id"] and line["game_id"] for line in started)
    assert {line["game_id"] for line in started} == {g.uid for g in games}
    repo.close()


def test_a_game_that_aborts_three_times_is_recorded_void_with_the_reason(
    pg_url: str, tmp_path: Path
) -> None:
    """Two bots that exit before connecting abort every attempt (neither connected): the queue
    retries the game, and the third aborted attempt is recorded void with the reason, so the
    tournament ends: the same outcome as in-process (tests/tournament/test_tournament_runner.py)."""
    repo = Repository.open(pg_url)
    t = make_tournament(repo, "broken", ["cmd:exit 3", "cmd:exit 4"], games_per_pairing=1)
    worker = start_worker(pg_url, tmp_path / "w1.log")
    try:
        summary = asyncio.run(asyncio.wait_for(_run_queued(repo, pg_url, "broken"), 120))
    finally:
        stop_workers([worker])
    assert summary.complete and summary.given_up == 1
    assert repo.get_tournament(t.id).status is TournamentStatus.FINISHED
    games = repo.list_games(tournament_id=t.id)
    # The three aborted attempts kept for their records (no slot), then the void holding it.
    assert [g.counted for g in games] == [False, False, False, True]
    assert all(g.verdict is Verdict.ABORTED for g in games)
    void = games[-1]
    assert void.voided and void.result == "*"
    assert void.reason == f"void: given up after 3 failed attempts (attempt 3: {games[2].reason})"
    retries = [line for line in log_lines(tmp_path / "w1.log") if line["event"] == "game_retry"]
    assert [line["attempt"] for line in retries] == [1, 2]
    repo.close()
