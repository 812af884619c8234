"""A launched bot's start-up: the referee's command line is read as the parser reads it, and
the path from ``python -m client_sdk`` to the first move imports nothing it does not need."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from client_sdk.__main__ import _launched, _parser

ROOT = Path(__file__).resolve().parents[2]

LAUNCHES = [
    ["--server=unix:/run/arena/referee.sock", "--token-file=/run/arena/token", "--", "bot.py"],
    ["--server=127.0.0.1:50051", "--token=abc", "--", "client_sdk.examples.random_bot"],
    ["--server=[::1]:5", "--token-file=/t=x", "--", "/bots/pkg:Agent"],
    ["--server=unix:/s", "--token=a-b", "--", "pkg.mod"],
]
OTHERS = [
    ["--server", "unix:/s", "--token-file=/t", "--", "bot.py"],
    ["--server=unix:/s", "--token-file=/t", "bot.py"],
    ["--server=", "--token-file=/t", "--", "bot.py"],
    ["--server=unix:/s", "--token-file=", "--", "bot.py"],
    ["--server=unix:/s", "--token=--", "--", "bot.py"],
    ["--server=-x", "--token=t", "--", "bot.py"],
    ["--server=unix:/s", "--tls", "--", "bot.py"],
    ["--token-file=/t", "--server=unix:/s", "--", "bot.py"],
    ["--server=unix:/s", "--token-file=/t", "--", "-bot"],
    ["--server=unix:/s", "--token-file=/t", "--", "bot.py", "more"],
    ["bot.py"],
]


@pytest.mark.parametrize("words", LAUNCHES)
def test_a_launch_command_line_reads_as_the_parser_reads_it(words: list[str]) -> None:
    """Every attribute the fast reading gives equals the parser's, defaults included."""
    found = _launched(words)
    assert found is not None
    assert vars(found) == vars(_parser().parse_args(words))


@pytest.mark.parametrize("words", OTHERS)
def test_any_other_command_line_goes_to_the_parser(words: list[str]) -> None:
    """Option order, spacing, other options or an odd BOT: the parser reads it, as before."""
    assert _launched(words) is None


#: What the path to a Tetress bot's first move never needs.
NEVER = {
    "argparse",
    "shutil",
    "lzma",
    "bz2",
    "shlex",
    "psutil",
    "numpy",
    "zipfile",
    "platform",
    "sqlalchemy",
    "engine.att",
    "engine.adjudication.adjudicator",
    "engine.adjudication.clock",
    "client_sdk._submit",
    "client_sdk._play",
}
#: The launch path up to the first move, without a referee: the command line read, the
#: session's modules, the bot loaded, the game's rules and a first move chosen.
PATH = """import sys
import client_sdk.__main__ as cli
args = cli._launched(["--server=unix:/s", "--token-file=/t", "--", BOT])
import client_sdk._session
from client_sdk._loader import load_bot
from engine.registry import load_game
load_game("tetress")
load_bot(args.bot)
print(" ".join(sorted(sys.modules)))
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "bot", ["client_sdk.examples.random_bot", str(ROOT / "client_sdk/examples/course_random")]
)
def test_the_launch_path_imports_only_what_the_first_move_needs(bot: str) -> None:
    """A fresh interpreter taking an SDK bot's or a course-style bot's launch path has not
    imported argparse (nor shutil and the compressors its help formatter pulls in), psutil,
    NumPy, the upload code, the adjudicator or the other game."""
    done = subprocess.run(
        [sys.executable, "-c", f"BOT = {bot!r}\n" + PATH],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    modules = set(done.stdout.split())
    assert {"grpc", "client_sdk._session", "engine.tetress"} <= modules
    assert not modules & NEVER, modules & NEVER


#: A bot that says, when its code is imported, whether the collector runs and how many objects
#: are frozen.
GC_PROBE = """import gc, sys
print("GC", gc.isenabled(), gc.get_freeze_count() > 0, file=sys.stderr)


def choose_move(state, clocks):
    return next(iter(state.legal_moves))
"""


@pytest.mark.slow
def test_the_start_up_is_frozen_before_the_bots_code_runs(tmp_path: Path) -> None:
    """Run as ``python -m client_sdk``, the SDK imports with the cyclic collector paused, then
    freezes what it imported and resumes the collector before the bot's code is imported;
    imported as a library it leaves the collector as it found it, nothing frozen."""
    bot = tmp_path / "gc_probe.py"
    bot.write_text(GC_PROBE)
    launched = subprocess.run(
        [sys.executable, "-m", "client_sdk", "--check", str(bot)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    assert "GC True True" in launched.stderr, launched.stderr
    library = subprocess.run(
        [
            sys.executable,
            "-c",
            "import gc, client_sdk; print(gc.isenabled(), gc.get_freeze_count())",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    assert library.stdout.split() == ["True", "0"], library.stdout
