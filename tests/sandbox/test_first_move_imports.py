"""What a launched bot has imported by its first move: what it needs, nothing more (psutil only
where memory is measured without /proc, NumPy only for bots that import it, one game's rules,
the course's ``referee.game`` only for course-style bots, no argparse, the placement tables read,
not built), cold and served warm."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine.registry import load_game
from referee.match.result import MatchResult
from referee.play.local import play_match
from referee.sandbox import warm
from referee.sandbox.isolation import Isolation
from referee.sandbox.launch import BotSpec

from .sandbox_required import require_sandbox

pytestmark = pytest.mark.slow

#: Prints every module loaded when its first move is asked for, then plays as the example does.
SDK_PROBE = """import sys
from client_sdk.examples.random_bot import RandomBot


class Agent(RandomBot):
    def choose_move(self, state, clocks):
        if not getattr(self, "told", False):
            self.told = True
            print("MODULES", " ".join(sorted(sys.modules)), flush=True)
            from engine.tetress import tables

            print("TABLES", "stored" if tables.stored("PLACEMENT_MASKS") else "built", flush=True)
        return super().choose_move(state, clocks)
"""
COURSE_PROBE = """import sys

from client_sdk.examples.course_random.program import Agent as Random


class Agent(Random):
    def action(self, **referee):
        if not getattr(self, "told", False):
            self.told = True
            print("MODULES", " ".join(sorted(sys.modules)), flush=True)
        return super().action(**referee)
"""
#: Never needed before a Tetress bot's first move.
NEVER = {
    "argparse",  # the referee's command line is read without it
    "shutil",
    "lzma",
    "bz2",
    "psutil",
    "numpy",
    "engine.att",
    "engine.adjudication.adjudicator",
    "engine.adjudication.clock",
    "client_sdk._submit",
    "client_sdk._play",
    "zipfile",
    "platform",
    "sqlalchemy",
}
#: Needed by every bot: the list printed is the real one.
ALWAYS = {"grpc", "client_sdk._session", "client_sdk.proto.referee_pb2", "engine.tetress"}


def _probes(tmp_path: Path) -> list[BotSpec]:
    sdk = tmp_path / "probe_sdk.py"
    sdk.write_text(SDK_PROBE)
    course = tmp_path / "probe_course"
    course.mkdir()
    (course / "__init__.py").write_text("from .program import Agent\n")
    (course / "program.py").write_text(COURSE_PROBE)
    return [BotSpec("sdk", str(sdk)), BotSpec("sdk", str(course))]


def _modules(result: MatchResult, seat: int) -> set[str]:
    lines = [line for line in result.output(seat).splitlines() if line.startswith("MODULES ")]
    assert lines, result.output(seat)
    return set(lines[0].split()[1:])


def _check(result: MatchResult) -> None:
    sdk, course = _modules(result, 0), _modules(result, 1)
    for modules in (sdk, course):
        assert modules >= ALWAYS, ALWAYS - modules
        assert not modules & NEVER, modules & NEVER
        referee = {m for m in modules if m.split(".")[0] == "referee"}
        assert all(m == "referee" or m.startswith("referee.game") for m in referee), referee
    assert "referee.game" in course
    # The tables come from the platform's copy (engine/tetress/tables.py), never built.
    assert "TABLES stored" in result.output(0), result.output(0)
    assert not {m for m in sdk if m.startswith(("referee.", "client_sdk._course"))}


def test_cold_bots_import_only_what_their_first_move_needs(tmp_path: Path) -> None:
    """An SDK bot and a course-style bot, each launched cold in the sandbox, have imported by
    their first move neither psutil, NumPy, the other game, the adjudicator nor the upload
    code, and the SDK bot not the course's ``referee.game``."""
    require_sandbox()

    async def main() -> MatchResult:
        return await play_match(_probes(tmp_path), load_game("tetress"), isolation=Isolation.BWRAP)

    result = asyncio.run(main())
    assert not any(bot.warm for bot in result.bots)
    _check(result)


def test_warm_bots_import_only_what_their_first_move_needs(tmp_path: Path) -> None:
    """The same holds for bots served by warm sandboxes: what a sandbox imports ahead of its
    game is what every bot imports, never a game's rules nor ``referee.game``."""
    require_sandbox()

    async def main() -> MatchResult:
        async with warm.demand(2, warm.WarmTerms(), Isolation.BWRAP, numpy=False) as need:
            assert need is not None
            await need.pool.ready(count=2, timeout=120)
            specs = _probes(tmp_path)
            return await play_match(specs, load_game("tetress"), isolation=Isolation.BWRAP)

    result = asyncio.run(main())
    assert all(bot.warm for bot in result.bots)
    _check(result)
