"""Grading games played here and on the workers treat an aborted game alike: it is not stored
under its grading uid (left free for the next grading), and it is played again up to the
tournaments' number of attempts before it is given up."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import structlog
from workers_helpers import log_lines, start_worker, stop_workers

from engine.registry import load_game
from referee.hosting.grade_play import GameSettings, local_player, queue_player
from referee.match.clock import TimeControl
from referee.play.bots import resolve_bot
from referee.sandbox.isolation import choose
from referee.storage import BotVersionInfo, Repository
from referee.tournament.aborts import MAX_ATTEMPTS
from referee.workers.dispatch import QueueDispatcher

pytestmark = pytest.mark.slow

#: Two bots that exit before connecting: every game between them is aborted.
BROKEN = ("cmd:exit 3", "cmd:exit 4")
UID = "grade-test-aborted"


def _settings() -> GameSettings:
    game = load_game("tetress", turn_limit=8)
    return GameSettings(game, TimeControl(game_time_s=60.0), connect_timeout_s=10.0)


def _seats(repo: Repository) -> list[BotVersionInfo]:
    return [resolve_bot(repo, spec) for spec in BROKEN]


def test_local_grading_plays_an_aborted_game_again_and_stores_none(tmp_path: Path) -> None:
    """Played here, an aborted grading game is played again up to MAX_ATTEMPTS times and
    nothing is stored under its uid."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    play = local_player(repo, _settings(), choose(False))
    with structlog.testing.capture_logs() as logs:
        asyncio.run(asyncio.wait_for(play(UID, _seats(repo), ()), 120))
    aborted = [e for e in logs if e["event"] == "grade_game_aborted"]
    assert [e["attempt"] for e in aborted] == list(range(1, MAX_ATTEMPTS + 1))
    assert repo.list_games(limit=None) == []
    repo.close()


def test_queued_grading_plays_an_aborted_game_again_and_stores_none(
    pg_url: str, tmp_path: Path
) -> None:
    """Played by a worker, an aborted grading game is retried by the queue up to MAX_ATTEMPTS
    times and nothing is stored under its uid, as when it is played here."""
    repo = Repository.open(pg_url)
    seats = _seats(repo)
    worker = start_worker(pg_url, tmp_path / "w1.log")

    async def grade_one() -> None:
        async with QueueDispatcher(repo, pg_url) as dispatcher:
            await queue_player(dispatcher, _settings())(UID, seats, ())

    try:
        asyncio.run(asyncio.wait_for(grade_one(), 120))
    finally:
        stop_workers([worker])
    lines = log_lines(tmp_path / "w1.log")
    aborted = [line for line in lines if line["event"] == "game_aborted"]
    assert len(aborted) == MAX_ATTEMPTS and all(line["kept"] is False for line in aborted)
    retries = [line["attempt"] for line in lines if line["event"] == "game_retry"]
    assert retries == list(range(1, MAX_ATTEMPTS))
    assert [line["attempt"] for line in lines if line["event"] == "game_given_up"] == [MAX_ATTEMPTS]
    assert repo.list_games(limit=None) == []
    repo.close()
