"""The server's in-process ladder starts its next game's bots in warm sandboxes shortly before
that game, and keeps none while there is nothing to play."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine.registry import load_game
from referee.hosting import autoplay
from referee.hosting.autoplay import AutoplaySettings, SubmittedLadder
from referee.hosting.casual import CasualRecorder
from referee.match.clock import TimeControl
from referee.sandbox import warm
from referee.storage import Repository
from tests.sandbox.sandbox_required import require_sandbox


async def _pool_sizes(ladder: SubmittedLadder, started: asyncio.Event) -> tuple[int, int, int]:
    """The pool's size right after a game started, before the next start, and once that
    start found nothing to play."""
    run = asyncio.create_task(ladder.run())
    try:
        # The game's own start, not ladder.running: a game that ends at once leaves that set
        # before a poll could see it there.
        async with asyncio.timeout(60):
            await started.wait()
        pool = warm.current_pool()
        assert pool is not None
        after_start = pool.size
        await pool.ready(count=2, timeout=60)  # started ahead of the next game
        before_next = pool.size
        async with asyncio.timeout(60):
            while pool.size:
                await asyncio.sleep(0.05)
        return after_start, before_next, pool.size
    finally:
        run.cancel()
        await asyncio.gather(run, return_exceptions=True)


@pytest.mark.slow
def test_the_ladder_warms_its_next_game_and_nothing_when_idle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game is played now and the next is due seconds later: no sandbox is kept between
    the game's start and the lead before the next start, two are ready before it, and none
    once that start finds nothing to play."""
    require_sandbox()
    monkeypatch.setattr(autoplay, "WARM_LEAD_S", 4.0)
    repo = Repository.open(str(tmp_path / "arena.db"))
    settings = AutoplaySettings(
        load_game("tetress"), TimeControl(10.0), 250, games_per_hour=3600 / 6, concurrency=2
    )
    ladder = SubmittedLadder(repo, settings, CasualRecorder(repo))
    pairs: list[Any] = [("red", "blue")]  # one pair now; by the next start, none
    monkeypatch.setattr(ladder, "next_pair", lambda: pairs.pop() if pairs else None)

    started = asyncio.Event()

    async def played(seats: Any) -> None:
        started.set()

    monkeypatch.setattr(ladder, "_play", played)
    after_start, before_next, idle = asyncio.run(_pool_sizes(ladder, started))
    assert after_start == 0
    assert before_next == 2
    assert idle == 0
