"""The referee's virtualenv as a sandboxed bot sees it: at /opt/venv, never at its host path."""

from __future__ import annotations

import sys
from pathlib import Path

from referee.sandbox.botcode import stage_code
from referee.sandbox.venv import VENV_INSIDE, inside, python_inside, venv

ROOT = Path(__file__).resolve().parents[2]


def test_paths_in_the_virtualenv_move_inside_and_others_stay() -> None:
    """Under a virtualenv its paths map to /opt/venv (as written or resolved); other paths,
    and everything without a virtualenv, are unchanged."""
    assert inside("/usr/bin/python3") == "/usr/bin/python3"
    assert inside("relative/path") == "relative/path"
    root = venv()
    if root is None:
        assert python_inside() == sys.executable
        return
    assert python_inside().startswith(f"{VENV_INSIDE}/bin/")
    assert inside(str(root / "lib")) == f"{VENV_INSIDE}/lib"
    assert inside(str(root)) == VENV_INSIDE


def test_a_command_bot_runs_the_virtualenv_python_from_inside(tmp_path: Path) -> None:
    """A command naming the referee's Python (as the tests' raw bots do) is rewritten to the
    virtualenv's inside path; its script is copied to /bots."""
    script = tmp_path / "bot.py"
    script.write_text("print('hi')\n")
    (tmp_path / "code").mkdir()
    staged = stage_code("command", f"{sys.executable} {script} --x", tmp_path / "code")
    assert str(script) not in staged.value and "/bots/" in staged.value
    if venv() is not None:
        assert sys.executable not in staged.value
        assert staged.value.startswith(f"{VENV_INSIDE}/bin/"), staged.value
