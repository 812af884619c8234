"""``python -m referee RED BLUE`` (the course's habit) plays ``referee match`` with the course
referee's flags; ``import referee.game`` stays free of the command machinery."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.commands._course import translate

ROOT = Path(__file__).resolve().parents[2]
COURSE_RANDOM = str(ROOT / "client_sdk" / "examples" / "course_random")
COURSE_GREEDY = str(ROOT / "client_sdk" / "examples" / "course_greedy")


def test_course_flags_become_match_options() -> None:
    """-t/-s/-v pass as they are, -c/-C colour the board or not, -a is dropped quietly, and
    -u and -l (with its optional file name) are dropped with a note each."""
    words, notes = translate(
        ["-t", "60", "-s", "300", "-v", "2", "-C", "-a", "-u", "-l", "game.log", "a", "b"]
    )
    assert words == ["-t", "60", "-s", "300", "-v", "2", "--no-color", "a", "b"]
    assert len(notes) == 2 and notes[0].startswith("-u") and notes[1].startswith("-l")
    words, notes = translate(["--colour", "--verbosity=3", "-l", "a", "b"])
    assert words == ["--color", "--verbose=3", "a", "b"]  # -l took no file: two bots follow


def _python_m_referee(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow
def test_python_m_referee_without_bots_prints_its_usage() -> None:
    """No bots: the course-style usage line and exit code 2 (not Python's own error)."""
    done = _python_m_referee()
    assert done.returncode == 2
    assert done.stderr.startswith("usage: python -m referee ")
    assert "Traceback" not in done.stderr and "__main__" not in done.stderr


@pytest.mark.slow
def test_python_m_referee_plays_a_match_with_course_flags() -> None:
    """``python -m referee RED BLUE -t 60 -s 300 -C -l`` plays one game under a 60 s clock,
    says once that -l means nothing here, and prints ``referee match``'s result."""
    done = _python_m_referee(
        COURSE_RANDOM, COURSE_GREEDY, "-t", "60", "-s", "300", "-C", "-l", "--json"
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["winner"] in ("RED", "BLUE", "DRAW")
    for seat in summary["seats"].values():
        assert 0 < seat["time_remaining_s"] <= 60
    assert done.stderr.count("python -m referee: -l: no log file here") == 1


@pytest.mark.slow
def test_course_imports_stay_light() -> None:
    """``import referee.game`` (what course bots do) loads no command module."""
    code = "import sys, referee.game; print(sorted(m for m in sys.modules if 'commands' in m))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.strip() == "[]", done.stderr


def test_the_log_file_may_follow_the_bots() -> None:
    """``-l FILE`` after the two bots (the course's order) takes FILE, not a third bot; a word
    after ``-l`` that is one of the two bots stays a bot, whatever options follow."""
    assert translate(["a", "b", "-l", "log.txt"])[0] == ["a", "b"]
    assert translate(["a", "b", "-t", "60", "-l", "log.txt", "-v", "2"])[0] == [
        "a", "b", "-t", "60", "-v", "2",
    ]  # fmt: skip
    assert translate(["-l", "a", "b", "-t", "60"])[0] == ["a", "b", "-t", "60"]
    assert translate(["-s", "200", "-l", "log.txt", "a", "b"])[0] == ["-s", "200", "a", "b"]
