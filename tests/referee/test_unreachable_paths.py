"""Paths in a folder the user may not enter (``match --record``, ``game export -o``, ``annotate
-o``, ``games --db``, a bot): one line naming the path, exit code 2, no traceback, and one JSON
object under ``--json``. Run as a normal user: root passes through any folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.sandbox.identity import reachable
from tests.sandbox.placed import as_user, place, placed_env, referee_argv

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
#: A uid no account uses, for "a normal user" when the suite runs as root.
NORMAL_UID = 1_899_000_019
BOT = "client_sdk.examples.random_bot"


@pytest.fixture(scope="module")
def world() -> Iterator[Path]:
    """A folder any user may enter (under /tmp), holding ``locked/`` that no normal user may."""
    folder = Path(tempfile.mkdtemp(prefix="arena-locked-", dir="/tmp"))
    folder.chmod(0o755)
    (folder / "locked").mkdir(mode=0o000)
    (folder / "locked").chmod(0o000)
    try:
        yield folder
    finally:
        (folder / "locked").chmod(0o700)
        shutil.rmtree(folder, ignore_errors=True)


def _command(world: Path) -> tuple[list[str], dict[str, str]]:
    """The ``referee`` command as a normal user, and its environment: this checkout when that
    user can reach it and its interpreter, else a copy placed in ``world``."""
    if os.geteuid() != 0:
        env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
        return [sys.executable, "-m", "referee.commands.main"], env
    python = Path(sys.executable)
    if reachable(ROOT / "referee" / "commands" / "main.py") and reachable(python.resolve()):
        env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200", HOME=str(world))
    else:
        if not (world / "arena").exists():
            place(world)
        python = world / "arena" / ".venv" / "bin" / "python"
        env = dict(placed_env(python), COLUMNS="200")
    return [*as_user(NORMAL_UID), *referee_argv(python)], env


def _referee(world: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    command, env = _command(world)
    return subprocess.run(
        [*command, *argv], cwd=world, env=env, capture_output=True, text=True, timeout=300
    )


CASES = {
    "match --record": ["match", BOT, BOT, "--record", "locked/g.pgn"],
    "match, a bot there": ["match", BOT, "locked/my_bot"],
    "game export -o": ["game", "export", "1", "-o", "locked/g.pgn"],
    "annotate -o": ["annotate", "g.pgn", "-o", "locked/a.pgn"],
    "games --db": ["games", "--db", "locked/arena.db"],
}


@pytest.mark.parametrize("argv", CASES.values(), ids=list(CASES))
def test_a_path_in_a_folder_the_user_may_not_enter(world: Path, argv: list[str]) -> None:
    """One line on stderr naming the path and saying permission was denied, exit code 2."""
    done = _referee(world, *argv)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"referee {argv[0]}") and "locked/" in lines[0], lines
    assert "permission denied" in lines[0]


@pytest.mark.parametrize("argv", [CASES["match --record"], CASES["games --db"]])
def test_json_says_it_too(world: Path, argv: list[str]) -> None:
    """Under ``--json`` standard output is one JSON object naming the error."""
    done = _referee(world, *argv, "--json")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    answer = json.loads(done.stdout)
    assert answer["command"] == argv[0]
    assert "locked/" in answer["error"] and "permission denied" in answer["error"]
