"""Warm sandboxes import NumPy ahead only for work whose bots may import it; a bot that does
is served either way, and reading a bot's imports runs none of its code."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine.registry import load_game
from referee.play.local import MatchResult, play_match
from referee.sandbox import warm
from referee.sandbox.isolation import Isolation
from referee.sandbox.launch import BotSpec

from .sandbox_required import require_sandbox

EXAMPLES = [
    "client_sdk.examples.random_bot",
    "client_sdk.examples.greedy_bot",
    "client_sdk/examples/course_random",
    "client_sdk/examples/course_greedy",
]
#: Says at import whether NumPy was there before its own code, then uses it and plays.
NUMPY_BOT = (
    "import sys\n"
    "print('PRELOADED', 'numpy' in sys.modules, flush=True)\n"
    "import numpy\n"
    "from client_sdk.examples.random_bot import RandomBot\n\n"
    "class Agent(RandomBot):\n"
    "    def __init__(self, seed=None):\n"
    "        super().__init__(seed)\n"
    "        print('NUMPY SUM', int(numpy.arange(4).sum()), flush=True)\n"
)


def test_the_example_bots_do_not_want_numpy() -> None:
    """None of the example bots (SDK modules, course packages) imports NumPy."""
    assert not warm.may_import_numpy(BotSpec("sdk", name) for name in EXAMPLES)


def test_a_bot_importing_numpy_itself_or_through_a_helper_wants_it(tmp_path: Path) -> None:
    """``import numpy`` in the bot's file, or in a helper package beside it that it imports."""
    direct = tmp_path / "direct.py"
    direct.write_text("import numpy as np\n")
    (tmp_path / "helper").mkdir()
    (tmp_path / "helper" / "__init__.py").write_text("from numpy import zeros\n")
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "__init__.py").write_text("from helper import zeros\n")
    plain = tmp_path / "plain.py"
    plain.write_text("import random\n")
    assert warm.may_import_numpy([BotSpec("sdk", str(direct))])
    assert warm.may_import_numpy([BotSpec("sdk", str(tmp_path / "course"))])
    assert not warm.may_import_numpy([BotSpec("sdk", str(plain))])


def test_an_unreadable_bot_is_assumed_to_want_numpy() -> None:
    """A module that cannot be found is the safe guess (import it ahead); a shell command
    is never served warm, so it asks for nothing."""
    assert warm.may_import_numpy([BotSpec("sdk", "no_such_module_anywhere.bot")])
    assert not warm.may_import_numpy([BotSpec("command", "python bot.py")])


def test_reading_a_module_bots_imports_runs_none_of_its_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module bot's package ``__init__`` is bot code: it is read, never imported."""
    package = tmp_path / "mybots"
    package.mkdir()
    ran = tmp_path / "ran"
    (package / "__init__.py").write_text(f"open({str(ran)!r}, 'w').close()\n")
    (package / "strong.py").write_text("import numpy\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert warm.may_import_numpy([BotSpec("sdk", "mybots.strong:Agent")])
    assert not ran.exists()


async def _served(bot: Path, numpy: bool) -> tuple[MatchResult, int]:
    specs = [BotSpec("sdk", str(bot)), BotSpec("sdk", "client_sdk.examples.random_bot")]
    async with warm.demand(2, warm.WarmTerms(), Isolation.BWRAP, numpy=numpy) as need:
        assert need is not None
        await need.pool.ready(count=2, timeout=120)
        result = await play_match(specs, load_game("tetress"), isolation=Isolation.BWRAP)
        return result, need.pool.hits


@pytest.mark.slow
@pytest.mark.parametrize("numpy", [True, False])
def test_a_numpy_bot_is_served_warm_with_or_without_numpy_ahead(
    tmp_path: Path, numpy: bool
) -> None:
    """From a sandbox that imported NumPy ahead the bot finds it loaded; from one that did
    not, it imports it itself; either way it is served warm and plays its game."""
    require_sandbox()
    bot = tmp_path / "numpy_bot.py"
    bot.write_text(NUMPY_BOT)
    result, hits = asyncio.run(_served(bot, numpy))
    out = result.output(0)
    assert f"PRELOADED {numpy}" in out, out
    assert "NUMPY SUM 6" in out, out
    assert hits == 2 and result.bots[0].warm
    assert result.report.end is not None
    assert result.report.end.verdict.value in ("normal", "turn_limit"), result.report.end
