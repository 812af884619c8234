"""``referee match`` says which isolation was in force: in its ``--json`` result, in the
record, and on stderr at start when bots run without the sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .sandbox_required import require_sandbox

pytestmark = pytest.mark.slow

BOT = "client_sdk.examples.random_bot"


def _match(tmp_path: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[dict, str]:
    record = tmp_path / "game.pgn"
    argv = [sys.executable, "-m", "referee.commands.main", "match", BOT, BOT, "--json"]
    done = subprocess.run(
        [*argv, "--record", str(record), *extra],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    return summary, done.stderr + record.read_text()


def test_a_sandboxed_match_says_bwrap(tmp_path: Path) -> None:
    """By default the bots are sandboxed: ``"sandbox": "bwrap"`` and a Sandbox tag."""
    require_sandbox()
    summary, text = _match(tmp_path)
    assert summary["sandbox"] == "bwrap"
    assert '[Sandbox "bwrap"]' in text and "WITHOUT the sandbox" not in text


def test_no_sandbox_says_so_and_records_none(tmp_path: Path) -> None:
    """``--no-sandbox``: a warning at start, ``"sandbox": "none"`` and the tag in the record."""
    summary, text = _match(tmp_path, "--no-sandbox")
    assert summary["sandbox"] == "none"
    assert "bots run WITHOUT the sandbox (--no-sandbox)" in text
    assert '[Sandbox "none"]' in text


def test_without_bubblewrap_the_referee_says_why_and_records_none(tmp_path: Path) -> None:
    """Where bwrap cannot be found the match still plays, uncontained, and says why."""
    env = {**os.environ, "PATH": str(tmp_path)}  # no bwrap (nor anything else) on PATH
    summary, text = _match(tmp_path, env=env)
    assert summary["sandbox"] == "none"
    assert "bubblewrap (bwrap) is not installed" in text
