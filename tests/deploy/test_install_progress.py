"""``deploy/install.sh`` says what it is doing: each step's start and end with the seconds since
the start, and a line at least every tick while a step runs (run in its dry-run mode, where
each step only takes the time it is given: the real steps take minutes and the network)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STEPS = ("virtualenv in .venv", "Python packages", "the checkout's bytecode")
LINE = re.compile(r"install\.sh: \[ *(\d+)s\] (.*)")


@pytest.mark.slow
def test_every_step_is_announced_and_a_long_step_ticks(tmp_path: Path) -> None:
    """Every step prints its start and its end; a step lasting several ticks prints a line in
    between; the seconds shown never go back; the last line gives the total."""
    env = {
        **os.environ,
        "INSTALL_DRY_RUN": "1",
        "INSTALL_DRY_RUN_S": "4",
        "INSTALL_TICK_S": "1",
        "TMPDIR": str(tmp_path),
    }
    done = subprocess.run(
        ["bash", str(REPO / "deploy" / "install.sh")],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [LINE.fullmatch(line) for line in done.stdout.splitlines()]
    assert all(lines), done.stdout
    said = [(int(m.group(1)), m.group(2)) for m in lines if m]
    stamps = [s for s, _ in said]
    assert stamps == sorted(stamps), done.stdout
    texts = [t for _, t in said]
    for step in STEPS:
        start = next(i for i, t in enumerate(texts) if t.startswith(step) and t.endswith("..."))
        end = next(i for i, t in enumerate(texts) if t.startswith(step) and t.endswith(": done"))
        assert any("still " + step in t for t in texts[start:end]), done.stdout
    assert texts[-1].startswith("installed in "), done.stdout
