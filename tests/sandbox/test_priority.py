"""A launched bot's CPU priority by the kind of game: inside ``priority.background()`` (full
validation games, the ladder) its bot runs 10 above the referee's niceness, cold or warm;
elsewhere at the referee's own."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from engine.registry import load_game
from referee.play.local import play_match
from referee.sandbox import priority, warm
from referee.sandbox.isolation import Isolation
from referee.sandbox.launch import BotSpec
from referee.sandbox.spawn import shim_argv

from .sandbox_required import require_sandbox

LEAVER = Path(__file__).parent / "bots" / "leaves_behind.py"


def _nice_bots(tmp_path: Path) -> list[BotSpec]:
    """Two bots that print their niceness when they start (``NICE n``)."""
    specs = []
    for name in ("first", "second"):
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(LEAVER, folder / "bot.py")
        specs.append(BotSpec("sdk", str(folder / "bot.py")))
    return specs


def test_background_raises_the_niceness_of_launches_inside_only() -> None:
    """Outside the block a launch inherits the referee's niceness (None); inside, and in tasks
    started inside, it is the referee's plus BACKGROUND_NICE, capped at 19; after it, None."""

    async def main() -> tuple[int | None, int | None, int | None, int | None]:
        before = priority.launch_niceness()
        with priority.background():
            inside = priority.launch_niceness()
            in_task = await asyncio.create_task(asyncio.to_thread(priority.launch_niceness))
        return before, inside, in_task, priority.launch_niceness()

    own = priority.own_niceness()
    expected = min(priority.MAX_NICE, own + priority.BACKGROUND_NICE)
    assert asyncio.run(main()) == (None, expected, expected, None)


def test_the_shim_is_told_the_niceness() -> None:
    """The exec shim's command line carries the niceness to set ('-': inherit the referee's)."""
    given = shim_argv("/bin/true", ["true"], 0, [], None, 15)
    inherited = shim_argv("/bin/true", ["true"], 0, [], None)
    assert given[given.index("/bin/true") - 2] == "15"
    assert inherited[inherited.index("/bin/true") - 2] == "-"


def _niceness_played(out: str) -> int:
    return int(out.split("NICE ", 1)[1].split()[0])


@pytest.mark.slow
def test_a_background_games_cold_bots_run_lower(tmp_path: Path) -> None:
    """Launched cold, a background game's two bots run at the referee's niceness + 10, a
    game's outside the block at the referee's own."""
    require_sandbox()
    specs = _nice_bots(tmp_path)
    game = load_game("tetress")

    async def main() -> tuple[list[int], list[int]]:
        usual = await play_match(specs, game, isolation=Isolation.BWRAP)
        with priority.background():
            lower = await play_match(specs, game, isolation=Isolation.BWRAP)
        return (
            [_niceness_played(usual.output(s)) for s in (0, 1)],
            [_niceness_played(lower.output(s)) for s in (0, 1)],
        )

    own = priority.own_niceness()
    usual, lower = asyncio.run(main())
    assert usual == [own, own]
    assert lower == [min(priority.MAX_NICE, own + priority.BACKGROUND_NICE)] * 2


@pytest.mark.slow
def test_a_background_games_warm_bots_run_lower(tmp_path: Path) -> None:
    """Served from warm sandboxes (started at the pool's own priority), a background game's
    bots are given the background niceness before their code starts."""
    require_sandbox()
    specs = _nice_bots(tmp_path)

    async def main() -> tuple[list[int], int]:
        async with warm.demand(2, warm.WarmTerms(), Isolation.BWRAP) as need:
            assert need is not None
            await need.pool.ready(count=2, timeout=120)
            with priority.background():
                result = await play_match(specs, load_game("tetress"), isolation=Isolation.BWRAP)
            return [_niceness_played(result.output(s)) for s in (0, 1)], need.pool.hits

    played, hits = asyncio.run(main())
    assert hits == 2
    own = priority.own_niceness()
    assert played == [min(priority.MAX_NICE, own + priority.BACKGROUND_NICE)] * 2
