"""Warm sandboxes: a bot served by one plays exactly as a cold one, nothing of one game
reaches the next, and the pool holds nothing once the work that wanted it is done."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from pathlib import Path

import psutil
import pytest

from engine.registry import load_game
from referee.play.local import MatchResult, play_match
from referee.sandbox import warm
from referee.sandbox.isolation import Isolation
from referee.sandbox.launch import BotSpec
from referee.telemetry.metrics import exposition

from .sandbox_required import require_sandbox

pytestmark = pytest.mark.slow

LEAVER = Path(__file__).parent / "bots" / "leaves_behind.py"


def _leavers(tmp_path: Path) -> list[BotSpec]:
    """Two different bots (two folders), both of which leave things behind."""
    specs = []
    for name in ("first", "second"):
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(LEAVER, folder / "bot.py")
        specs.append(BotSpec("sdk", str(folder / "bot.py")))
    return specs


async def _games(specs: list[BotSpec], games: int) -> tuple[list[MatchResult], int, int]:
    """``games`` games in a row under a warm pool; the results, the pool's size after each
    game's wait, and its size once the work is over."""
    results = []
    async with warm.demand(2, warm.WarmTerms(), Isolation.BWRAP) as need:
        assert need is not None
        pool = need.pool
        for number in range(games):
            if number == 0:  # taken as soon as started: the game waits for the imports
                async with asyncio.timeout(120):
                    while pool.size < 2:
                        await asyncio.sleep(0.01)
            else:
                await pool.ready(count=2, timeout=120)
            results.append(await play_match(specs, load_game("tetress"), isolation=Isolation.BWRAP))
        hits = pool.hits
    return results, hits, pool.size


def test_nothing_a_bot_leaves_reaches_the_next_game(tmp_path: Path) -> None:
    """A bot that leaves files in /tmp, a sitecustomize, a module in sys.modules, patched
    stdlib, builtins, NumPy and SDK modules finds none of it in its next game or another's."""
    require_sandbox()
    results, hits, _ = asyncio.run(_games(_leavers(tmp_path), 3))
    assert hits == 6
    folders = set()
    for result in results:
        assert result.report.end is not None
        assert result.report.end.verdict.value in ("normal", "turn_limit"), result.report.end
        for seat in (0, 1):
            out = result.output(seat)
            assert "LEFTOVERS FOUND: none" in out, out
            assert "LEFTOVERS LEFT" in out and "WROTE" not in out, out
            assert "NICE 0" in out, out  # imported at a low priority, plays at the usual one
            bot = result.bots[seat]
            assert bot.warm and bot.isolation is Isolation.BWRAP
            assert bot.jail is not None
            folders.add(bot.jail.folder)
            assert not bot.jail.folder.exists()  # removed with its game
    assert len(folders) == 6  # a fresh sandbox for every bot of every game


def test_a_warm_bot_plays_at_the_referees_niceness(tmp_path: Path) -> None:
    """Under a referee run at niceness 10 (an operator's ``nice -n 10 referee serve``), a warm
    sandbox's bot plays at 10 as a cold launch would, not back at 0."""
    require_sandbox()
    tasks = os.listdir("/proc/self/task")
    for task in tasks:
        os.setpriority(os.PRIO_PROCESS, int(task), 10)
    try:
        results, hits, _ = asyncio.run(_games(_leavers(tmp_path), 1))
    finally:
        for task in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError):  # root (the warm sandbox's case) may lower it
                os.setpriority(os.PRIO_PROCESS, int(task), 0)
    assert hits == 2
    for seat in (0, 1):
        out = results[0].output(seat)
        assert "NICE 10" in out, out


def test_the_pool_is_empty_once_the_work_is_done(tmp_path: Path) -> None:
    """Leaving the work's block stops every unused sandbox; the metrics count the hits."""
    require_sandbox()
    _, hits, size = asyncio.run(_games(_leavers(tmp_path), 1))
    assert hits == 2 and size == 0
    alive = [p for p in psutil.Process().children(recursive=True) if p.status() != "zombie"]
    assert not alive, alive
    text = exposition().decode()
    assert "tetromino_sandbox_warm_pool_size 0.0" in text
    assert 'tetromino_sandbox_warm_launches_total{result="hit"}' in text


def test_warm_sandboxes_are_off_without_the_sandbox() -> None:
    """An uncontained launch never asks for a pool (it would hold nothing useful)."""

    async def main() -> object:
        async with warm.demand(4, isolation=Isolation.NONE) as need:
            return need

    assert asyncio.run(main()) is None


def test_a_bot_shipping_a_module_imported_ahead_starts_cold(tmp_path: Path) -> None:
    """A bot whose own ``numpy.py`` would shadow the warm sandbox's NumPy gets a cold launch
    (where its module wins, as it always did), and the unused warm sandbox is discarded."""
    require_sandbox()
    folder = tmp_path / "shadowing"
    folder.mkdir()
    (folder / "numpy.py").write_text("MINE = True\n")
    (folder / "bot.py").write_text(
        "import numpy\n"
        "from client_sdk.examples.random_bot import RandomBot\n\n"
        "class Agent(RandomBot):\n"
        "    def __init__(self, seed=None):\n"
        "        super().__init__(seed)\n"
        "        print('OWN NUMPY', getattr(numpy, 'MINE', False), flush=True)\n"
    )
    specs = [BotSpec("sdk", str(folder / "bot.py")), _leavers(tmp_path)[0]]

    async def main() -> tuple[MatchResult, int, int]:
        async with warm.demand(2, warm.WarmTerms(), Isolation.BWRAP) as need:
            assert need is not None
            await need.pool.ready(count=2, timeout=120)
            result = await play_match(specs, load_game("tetress"), isolation=Isolation.BWRAP)
            return result, need.pool.hits, need.pool.misses

    result, hits, misses = asyncio.run(main())
    assert "OWN NUMPY True" in result.output(0), result.output(0)
    assert not result.bots[0].warm and result.bots[1].warm
    assert (hits, misses) == (1, 1)  # the shadowing bot's sandbox was unfit: it went cold
