"""A sandboxed tournament takes its bots from warm sandboxes and leaves none behind."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psutil
import pytest
from tournament_helpers import GREEDY, RANDOM, make_tournament

from referee.sandbox.isolation import Isolation
from referee.storage import Repository, TournamentFormat
from referee.telemetry.metrics import REGISTRY
from referee.tournament.runner import TournamentRunner
from tests.sandbox.sandbox_required import require_sandbox


def _hits() -> float:
    found = REGISTRY.get_sample_value("tetromino_sandbox_warm_launches_total", {"result": "hit"})
    return found or 0.0


@pytest.mark.slow
def test_tournament_games_use_warm_sandboxes(tmp_path: Path) -> None:
    """Played one at a time, the second game's bots come from the warm pool; once the
    tournament is over no sandbox is left running."""
    require_sandbox()
    repo = Repository.open(str(tmp_path / "arena.db"))
    t = make_tournament(repo, "warm", TournamentFormat.ROUND_ROBIN, [RANDOM, GREEDY])
    before = _hits()
    runner = TournamentRunner(repo, t.id, isolation=Isolation.BWRAP, concurrency=1)
    summary = asyncio.run(runner.run())
    assert summary.complete and summary.recorded == 2
    assert _hits() - before >= 2
    alive = [p for p in psutil.Process().children(recursive=True) if p.status() != "zombie"]
    assert not alive, alive
