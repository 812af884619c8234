"""``referee match``'s result: both seats' lines together, then the faulty bot's last output
from a line boundary that reads (its last traceback whole, not the middle of one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.commands.match import LAST_LINES, MAX_TRACEBACK_LINES, last_output

ROOT = Path(__file__).resolve().parents[2]
REFEREE = [sys.executable, "-m", "referee.commands.main"]
CRASHER = Path(__file__).parent / "bots" / "chatty_crash_bot.py"


def _traceback(frames: int) -> list[str]:
    lines = ["Traceback (most recent call last):"]
    for i in range(frames):
        lines += [f'  File "bot.py", line {i}, in f{i}', f"    f{i + 1}()"]
    return [*lines, "RuntimeError: boom"]


def test_last_output_starts_at_the_traceback() -> None:
    """Chatter then a traceback: the block is the traceback from its first line (and what
    followed it), however many chatter lines came before."""
    chatter = [f"thinking {i}" for i in range(40)]
    trace = _traceback(5)
    text = "\n".join([*chatter, *trace, "[client_sdk] game over"]) + "\n"
    assert last_output(text) == [*trace, "[client_sdk] game over"]


def test_last_output_of_a_long_traceback_keeps_its_head_and_end() -> None:
    """A traceback longer than the block: its first line, a mark, then its last lines."""
    trace = _traceback(40)
    shown = last_output("\n".join(trace))
    assert shown[0] == trace[0] and shown[1].strip() == "[...]"
    assert shown[-1] == "RuntimeError: boom" and len(shown) == MAX_TRACEBACK_LINES


def test_last_output_without_a_traceback_is_the_last_lines() -> None:
    """No traceback: the last few lines."""
    lines = [f"line {i}" for i in range(30)]
    assert last_output("\n".join(lines)) == lines[-LAST_LINES:]


@pytest.mark.slow
@pytest.mark.parametrize("columns", ["80", "100"])
def test_a_crash_shows_both_seats_then_the_whole_traceback(columns: str) -> None:
    """A bot that dies of an exception: the two seat lines follow each other, and its last
    output begins with the traceback's first line."""
    done = subprocess.run(
        [*REFEREE, "match", str(CRASHER), "client_sdk.examples.random_bot"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=180,
        env=dict(os.environ, COLUMNS=columns),
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    seat_lines = [i for i, line in enumerate(lines) if line.startswith(("  RED ", "  BLUE "))]
    assert len(seat_lines) == 2 and seat_lines[1] == seat_lines[0] + 1, done.stdout
    block = lines.index("  RED's last output:")
    assert block == seat_lines[1] + 1
    assert lines[block + 1].strip() == "Traceback (most recent call last):", done.stdout
    assert "RuntimeError: the evaluation table is empty" in done.stdout
