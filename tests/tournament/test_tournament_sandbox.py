"""Tournaments and the sandbox: which isolation every game records, and other owners' bots
refused uncontained unless the operator says ``--no-sandbox``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tournament_helpers import GREEDY, RANDOM, make_tournament

from referee.play.bots import register_source
from referee.sandbox.isolation import Isolation, SandboxUnavailable
from referee.storage import Repository, TournamentFormat, TournamentStatus
from referee.tournament.runner import TournamentRunner
from tests.sandbox.sandbox_required import require_sandbox


def _owned_tournament(tmp_path: Path) -> tuple[Repository, int]:
    repo = Repository.open(str(tmp_path / "arena.db"))
    repo.create_player("eve")
    register_source(repo, RANDOM, name="eve-bot", owner="eve")
    t = make_tournament(repo, "owned", TournamentFormat.ROUND_ROBIN, ["eve-bot", GREEDY])
    return repo, t.id


def _sandbox_tags(repo: Repository, tournament_id: int) -> set[str]:
    tags = set()
    for game in repo.list_games(tournament_id=tournament_id):
        text = repo.get_game(game.id).record_text or ""
        tags.update(line for line in text.splitlines() if line.startswith("[Sandbox "))
    return tags


@pytest.mark.slow  # it asks whether the sandbox works here: a bwrap process
def test_another_owners_bot_is_refused_without_the_sandbox(tmp_path: Path) -> None:
    """Without the sandbox, a tournament with another player's bot refuses to start (a clear
    error naming --no-sandbox) and plays no game."""
    repo, tid = _owned_tournament(tmp_path)
    runner = TournamentRunner(repo, tid, isolation=Isolation.NONE)
    with pytest.raises(SandboxUnavailable, match="--no-sandbox"):
        asyncio.run(runner.run())
    assert repo.list_games(tournament_id=tid) == []
    assert repo.get_tournament(tid).status is not TournamentStatus.RUNNING


@pytest.mark.slow
def test_no_sandbox_runs_them_and_records_sandbox_none(tmp_path: Path) -> None:
    """``--no-sandbox`` lets the tournament run; every game is recorded with sandbox none."""
    repo, tid = _owned_tournament(tmp_path)
    summary = asyncio.run(TournamentRunner(repo, tid, no_sandbox=True).run())
    assert summary.complete
    assert _sandbox_tags(repo, tid) == {'[Sandbox "none"]'}


@pytest.mark.slow
def test_sandboxed_tournament_records_sandbox_bwrap(tmp_path: Path) -> None:
    """With the sandbox, other owners' bots play, and every game is recorded as sandboxed."""
    require_sandbox()
    repo, tid = _owned_tournament(tmp_path)
    summary = asyncio.run(TournamentRunner(repo, tid, isolation=Isolation.BWRAP).run())
    assert summary.complete
    assert _sandbox_tags(repo, tid) == {'[Sandbox "bwrap"]'}
