"""Course bots laid out as the course runs them: a helper folder without ``__init__.py`` (a
namespace package), relative imports inside the agent package, a helper module beside it and a
data file opened relative to ``__file__`` all reach the bot's per-game copy, and the bot plays
in ``referee match`` and in a tournament."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.sandbox.botcode import stage_code
from referee.storage import Repository

from .sandbox_required import require_sandbox

ROOT = Path(__file__).resolve().parents[2]
COURSE = Path(__file__).parent / "bots" / "course_layout"
AGENT = str(COURSE / "agent")


def test_the_copy_holds_a_namespace_helper_folder_and_a_helper_module(tmp_path: Path) -> None:
    """The per-game copy has ``utils/`` (no ``__init__.py``, nested folder included), the
    helper module, and the package's own data file."""
    staged = stage_code("sdk", AGENT, tmp_path)
    assert (tmp_path / "utils" / "choose.py").is_file()
    assert (tmp_path / "utils" / "search" / "depth.py").is_file()
    assert (tmp_path / "helpermod.py").is_file()
    assert (tmp_path / "agent" / "data" / "openings.json").is_file()
    assert staged.value == "/bots/agent"


def test_a_folder_named_like_an_installed_module_is_not_copied(tmp_path: Path) -> None:
    """Python prefers the standard library's ``json`` (or an installed ``numpy``) to a
    namespace folder of that name, so the copy leaves such a folder out."""
    parent = tmp_path / "src"
    (parent / "bot").mkdir(parents=True)
    (parent / "bot" / "__init__.py").write_text("import json\nimport numpy\nimport mine\n")
    for name in ("json", "numpy", "mine"):
        (parent / name).mkdir()
        (parent / name / "big.bin").write_bytes(b"x")
    copy = tmp_path / "copy"
    copy.mkdir()
    stage_code("sdk", str(parent / "bot"), copy)
    assert sorted(p.name for p in copy.iterdir()) == ["bot", "mine"]


def _referee(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.commands.main", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "160"},
        check=False,
    )


@pytest.mark.slow
def test_the_course_layout_plays_a_sandboxed_match() -> None:
    """``referee match`` loads and plays the course layout in the sandbox; the bot refuses
    to start unless every helper was found, so a normal end proves they were."""
    require_sandbox()
    done = _referee("match", AGENT, "client_sdk.examples.random_bot", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["sandbox"] == "bwrap"
    assert summary["verdict"] in ("normal", "turn_limit"), summary


@pytest.mark.slow
def test_the_course_layout_plays_a_tournament(tmp_path: Path) -> None:
    """``referee tournament quick`` with the course layout: both games finished, no forfeit."""
    require_sandbox()
    db = tmp_path / "arena.db"
    args = ("tournament", "quick", AGENT, "client_sdk.examples.random_bot")
    done = _referee(*args, "--param", "turn_limit=20", "--db", str(db), "--create")
    assert done.returncode == 0, done.stdout + done.stderr
    repo = Repository.open(str(db))
    try:
        (tournament,) = repo.list_tournaments()
        games = repo.list_games(tournament_id=tournament.id)
        assert tournament.status == "finished" and len(games) == 2
        assert {g.verdict for g in games} <= {"normal", "turn_limit"}, games
    finally:
        repo.close()
