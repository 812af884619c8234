"""The main job (``referee tournament quick``) and ``referee games`` in a real terminal of 80
and 100 columns (a pseudo-terminal of that size): the progress bar keeps its count and ETA,
the Elo table is whole, the run closes with where the games went and what to run next, and
``games`` keeps its id column; piped, ``games`` prints one row per line."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import termios
from pathlib import Path

import pytest
from rich.console import Console
from tournament_helpers import PYTHON, ROOT

from referee.commands._arena import ProgressDisplay, leaderboard_table
from referee.ratings.results import GameResult
from referee.ratings.table import build_leaderboard

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")
LONG = "a-rather-long-student-bot-name-number"


def _in_terminal(argv: list[str], columns: int, cwd: Path) -> tuple[int, str]:
    """Run ``argv`` with a pseudo-terminal of ``columns`` columns as stdout and stderr."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen(argv, stdout=slave, stderr=slave, cwd=cwd, env=env | {"TERM": "xterm"})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    code = proc.wait(timeout=600)
    return code, ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))


def _table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("┃", "│", "┏", "└", "┡"))]


@pytest.mark.parametrize("columns", [80, 100])
def test_progress_line_keeps_count_and_eta(columns: int) -> None:
    """The progress line at 80 and 100 columns: the game count and the ETA are whole; the
    last game's label takes only what is left."""
    out = io.StringIO()
    console = Console(file=out, width=columns, force_terminal=True, color_system=None)
    display = ProgressDisplay(console, "quick-20261126-143440")
    display.started(12, 0)
    for _ in range(3):
        display.game_done(None, "course_greedy 1-0 course_random (turn_limit)")  # type: ignore[arg-type]
    console.print(display.progress.get_renderable())
    line = ANSI.sub("", out.getvalue()).splitlines()[0]
    assert len(line) <= columns
    assert re.search(r" 3/12 games \d:\d\d:\d\d ETA \d:\d\d:\d\d ", line), line


def _board() -> object:
    names = [f"{LONG}-{i}@1" for i in range(3)] + ["short@1"]
    results = [
        GameResult.from_winner(a, b, w) for a in names for b in names if a != b for w in (0, 1)
    ]
    results.append(GameResult.from_winner(names[0], names[3], 1, "time", forfeit=True))
    results.append(GameResult.from_winner(names[3], names[1], 0, "memory", forfeit=True))

    class St:
        board = build_leaderboard(results, players=names)

    return St()


@pytest.mark.parametrize("columns", [80, 100])
def test_elo_table_is_whole_at_terminal_width(columns: int) -> None:
    """At 80 and 100 columns every line of the Elo table fits with its right border, every
    number is whole, long names are cut with an ellipsis (never wrapped), the forfeits are
    still said, and ``inc. Elo`` is explained."""
    out = io.StringIO()
    console = Console(file=out, width=columns, force_terminal=True, color_system=None)
    st = _board()
    console.print(leaderboard_table(st, "t"))  # type: ignore[arg-type]
    text = out.getvalue()
    rows = [line for line in _table_lines(text) if line.startswith("│")]
    assert len(rows) == 4  # one line per bot: no name wrapped onto a second line
    for line in _table_lines(text):
        assert len(line) <= columns and line.rstrip()[-1] in "┃│┓┩┘", line
    for r in st.board.rows:  # type: ignore[attr-defined]
        # A provisional rating carries "?" right after its number.
        elo = f" {r.elo:.0f}" + ("?" if r.provisional else " ")
        assert elo in text and f" {r.elo_incremental:.0f} " in text
    assert "…" in text and LONG not in text.replace("\n", "")
    flat = " ".join(text.split())
    assert "time 1" in flat and "memory 1" in flat
    assert "inc. Elo: updated after each game" in flat


@pytest.mark.slow
def test_main_job_and_games_in_a_terminal(tmp_path: Path) -> None:
    """``tournament quick`` in an 80-column terminal: the final progress line shows 12/12 and
    the ETA, the table fits, and the last line names the database, all the CPU used (the
    bots' and the referee's) and the next commands;
    ``games`` at 100 columns shows every id whole; piped, one row per line."""
    referee = [PYTHON, "-m", "referee.commands.main"]
    quick = [*referee, "tournament", "quick", "--param", "turn_limit=20", "--db", "t.db"]
    code, text = _in_terminal([*quick, "--create", "--name", "q"], 80, tmp_path)
    assert code == 0, text
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in _table_lines(text)), text
    assert re.search(r" 12/12 games \d:\d\d:\d\d ETA ", text), text
    closing = " ".join(text[text.index("12 games stored") :].split())
    stated = re.match(
        r"12 games stored in t\.db \(tournament q\), ([0-9.]+) s of CPU in all "
        r"\(bots ([0-9.]+) s, referee ([0-9.]+) s\)\. ",
        closing,
    )
    assert stated is not None, closing
    total, bots, own = (float(x) for x in stated.groups())
    assert own > 0 and abs(total - bots - own) < 0.11, closing
    assert (
        "referee games --tournament q --db t.db" in closing and "referee serve --db t.db" in closing
    )
    assert "Traceback" not in text and lines

    code, text = _in_terminal([*referee, "games", "--db", "t.db"], 100, tmp_path)
    assert code == 0, text
    ids = [m.group(1) for m in re.finditer(r"^│\s*(\d+) │", text, re.M)]
    # Every game's id whole (the list is in finishing order, and two games may finish together).
    assert sorted(ids, key=int) == [str(i) for i in range(1, 13)], text
    assert all(len(line) <= 100 for line in _table_lines(text))

    piped = subprocess.run(
        [*referee, "games", "--db", "t.db"], capture_output=True, text=True, cwd=tmp_path
    )
    rows = [line for line in piped.stdout.splitlines() if line.startswith("│")]
    assert len(rows) == 12, piped.stdout
    assert all("moves;" in row or "legal move" in row for row in rows)  # the reason, whole
    assert not (ROOT / "t.db").exists()
