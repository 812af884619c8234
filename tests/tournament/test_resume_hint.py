"""After Ctrl-C the tournament's resume hint repeats every option the run needs (``--db``
above all) and says "resume"."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest
from tournament_helpers import GREEDY, PYTHON, RANDOM, ROOT

from referee.commands._resume import resume_command
from referee.commands.main import build_parser
from referee.storage import Repository


def test_the_hint_repeats_the_run_options() -> None:
    """``--db``, ``--listen``, a changed ``--remote-timeout``, ``--no-sandbox`` and
    ``--in-process`` come back; options left at their defaults and tournament settings do not."""
    argv = ["tournament", "quick", "--db", "my dir/a.db", "--listen", "127.0.0.1:5000"]
    argv += ["--remote-timeout", "30", "--no-sandbox", "--in-process", "-t", "9"]
    args = build_parser().parse_args(argv)
    hint = resume_command(args, "quick-1")
    assert shlex.split(hint) == [
        "referee",
        "tournament",
        "resume",
        "quick-1",
        "--db",
        "my dir/a.db",
        "--listen",
        "127.0.0.1:5000",
        "--remote-timeout",
        "30",
        "--no-sandbox",
        "--in-process",
    ]
    plain = build_parser().parse_args(["tournament", "run", "t"])
    assert resume_command(plain, "t") == "referee tournament resume t"


@pytest.mark.slow
def test_ctrl_c_says_how_to_resume_with_the_db(tmp_path: Path) -> None:
    """SIGINT during ``tournament quick --db FILE``: the bots stop and the line names
    ``referee tournament resume NAME --db FILE``, which then finishes the tournament."""
    db = tmp_path / "elsewhere.db"
    argv = [PYTHON, "-m", "referee.commands.main", "tournament", "quick", RANDOM, GREEDY]
    argv += ["--name", "cut", "--cycles", "3", "--param", "turn_limit=20", "--concurrency", "1"]
    argv += ["--db", str(db), "--create", "--no-progress"]
    proc = subprocess.Popen(argv, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while not _games(db):
            assert proc.poll() is None and time.monotonic() < deadline, "no game was played"
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    line = err.strip().splitlines()[-1]
    assert f"Resume with: referee tournament resume cut --db {db}" in line, err
    hint = shlex.split(line.split("Resume with: ", 1)[1])
    done = subprocess.run(
        [PYTHON, "-m", "referee.commands.main", *hint[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "arena.db").exists()  # the hint did not resume somewhere else
    assert _games(db) == 6


def _games(db: Path) -> int:
    if not db.exists():
        return 0
    repo = Repository.open(str(db))
    try:
        return sum(1 for g in repo.list_games(limit=None) if g.counted)
    finally:
        repo.close()


@pytest.mark.slow
def test_the_create_hint_names_the_db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``tournament create --db FILE``: both commands the closing line suggests name FILE."""
    from referee.commands.main import main

    db = str(tmp_path / "my dir" / "a.db")
    (tmp_path / "my dir").mkdir()
    repo = Repository.open(db)
    repo.create_player("alice")
    for name in ("one", "two"):
        repo.add_bot_version(name, "1", source_kind="remote", location=name, owner="alice")
    repo.close()
    assert main(["tournament", "create", "t 1", "one", "two", "--db", db]) == 0
    hint = capsys.readouterr().out.strip().splitlines()[-1]
    commands = [c.split(" (")[0] for c in hint.split(": ", 1)[1].split(" or: ")]
    assert [shlex.split(c) for c in commands] == [
        ["referee", "tournament", verb, "t 1", "--db", db] for verb in ("start", "run")
    ], hint
