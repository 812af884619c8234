"""Refuse early: referee match, tournament create and bot add load-check a local bot through
the launch path and refuse one that cannot be loaded with one line and exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from serving import RANDOM, cli

from referee.storage import Repository

pytestmark = pytest.mark.slow


@pytest.fixture
def broken(tmp_path: Path) -> dict[str, Path]:
    no_agent = tmp_path / "no_agent"
    no_agent.mkdir()
    (no_agent / "__init__.py").write_text("X = 1\n")
    syntax = tmp_path / "syntax_bot.py"
    syntax.write_text("def choose_move(state, clocks)\n    return None\n")
    bad_import = tmp_path / "bad_import"
    bad_import.mkdir()
    (bad_import / "__init__.py").write_text("import numpy_but_misspelt\n")
    return {"no_agent": no_agent, "syntax": syntax, "bad_import": bad_import}


def test_match_refuses_a_module_that_does_not_exist() -> None:
    """referee match with a module that does not exist: one line, exit 2, no game."""
    done = cli("match", "no_such_student.bot", RANDOM)
    assert done.returncode == 2
    assert done.stderr == (
        "referee match: bot no_such_student.bot cannot be loaded: "
        "no such directory, file or module\n"
    )
    assert done.stdout == ""


def test_match_refuses_a_directory_without_agent(broken: dict[str, Path]) -> None:
    """A package without Agent is refused before any game, naming what was looked for."""
    done = cli("match", RANDOM, str(broken["no_agent"]))
    assert done.returncode == 2
    assert done.stderr == (
        f"referee match: bot {broken['no_agent']} cannot be loaded: found no Agent class, "
        "Agent subclass, `agent` object or choose_move function\n"
    )


def test_match_refuses_syntax_and_import_errors(broken: dict[str, Path]) -> None:
    """A syntax error and a failing import inside the bot are each one line naming the cause."""
    done = cli("match", str(broken["syntax"]), RANDOM)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert f"syntax error in {broken['syntax']}:1" in done.stderr
    done = cli("match", str(broken["bad_import"]), RANDOM)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "ModuleNotFoundError: No module named 'numpy_but_misspelt'" in done.stderr


def test_tournament_create_refuses_and_registers_nothing(
    tmp_path: Path, broken: dict[str, Path]
) -> None:
    """tournament create refuses an unloadable bot; no tournament and no bot is stored."""
    db = tmp_path / "arena.db"
    done = cli("tournament", "create", "t", RANDOM, str(broken["no_agent"]), "--db", str(db),
               "--create")  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith(f"referee tournament create: bot {broken['no_agent']} cannot")
    assert done.stderr.count("\n") == 1
    repo = Repository.open(str(db))
    assert repo.list_tournaments() == [] and repo.list_bot_versions() == []


def test_bot_add_refuses(tmp_path: Path) -> None:
    """bot add refuses a module that does not exist; a good one is registered."""
    db = tmp_path / "arena.db"
    done = cli("bot", "add", "mine", "no_such_student.bot", "--db", str(db), "--create")
    assert done.returncode == 2
    assert done.stderr == (
        "referee bot add: bot no_such_student.bot cannot be loaded: "
        "no such directory, file or module\n"
    )
    done = cli("bot", "add", "mine", RANDOM, "--db", str(db))
    assert done.returncode == 0, done.stderr
