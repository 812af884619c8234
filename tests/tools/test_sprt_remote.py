"""``referee sprt`` with a remote bot: a real served referee, a real ``python -m client_sdk``
process connecting with its owner's token, against a launched bot; and a remote entry that
never connects ending the run with the stated sentence."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.storage import Repository

ROOT = Path(__file__).resolve().parents[2]
GREEDY = "client_sdk.examples.greedy_bot"
RANDOM = "client_sdk.examples.random_bot"

pytestmark = pytest.mark.slow


def _cli(db: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "referee.commands.main", *args, "--db", str(db), "--create"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _remote_entry(db: Path) -> str:
    """Register player ``ann`` and her remote bot ``ann-bot``; her token."""
    token = _cli(db, "player", "add", "ann").strip().splitlines()[-1]
    _cli(db, "bot", "add", "ann-bot", "--remote", "--owner", "ann")
    return token


def _sprt(db: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "referee.commands.main", "sprt", *args, "--db", str(db)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_sprt_remote_bot_against_launched_bot(tmp_path: Path) -> None:
    """A remote greedy bot (client_sdk process, owner's token) plays a bounded SPRT against a
    launched random bot: its one-game-at-a-time session serialises the pairs asked at
    concurrency 2, every counted game is stored with the remote bot in it."""
    db = tmp_path / "a.db"
    token = _remote_entry(db)
    sprt = _sprt(
        db,
        "ann-bot",
        RANDOM,
        "--elo1",
        "150",
        "--max-pairs",
        "3",
        "--concurrency",
        "2",
        "--listen",
        "127.0.0.1:0",
        "--remote-timeout",
        "60",
        "--json",
    )
    bot = None
    try:
        assert sprt.stderr is not None
        head = [sprt.stderr.readline() for _ in range(2)]  # the SPRT's line, the address
        line = head[-1]
        assert "listening on" in line, head
        address = line.split()[-1]
        bot = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "client_sdk",
                "--server",
                address,
                "--token",
                token,
                "--name",
                "ann-bot",
                "--no-reconnect",
                GREEDY,
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # Read on through the same buffered reader as the head: communicate() reads the pipe
        # beneath it and would lose lines readline() had already buffered. Both outputs are a
        # few kB (under a pipe's buffer), so reading stderr first cannot block the SPRT.
        err = "".join(head) + sprt.stderr.read()
        assert sprt.stdout is not None
        out = sprt.stdout.read()
        sprt.wait(240)
    finally:
        for proc in (sprt, bot):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(10)
    assert sprt.returncode in (0, 1), out + err
    assert "waiting up to 60 s for remote bot ann-bot@" in err
    assert "plays 1 game(s) at once: pairs run 1 at a time" in err
    result = json.loads(out.strip().splitlines()[-1])
    assert 1 <= result["pairs"] <= 3
    repo = Repository.open(f"sqlite:///{db}")
    remote = repo.find_bot_version("ann-bot", None).id
    games = repo.list_games(limit=100)
    assert len(games) == 2 * result["pairs"]
    assert all(remote in {s.bot_version_id for s in g.seats} for g in games)
    # Sides swapped within each pair: the remote bot played both seats.
    assert {s.seat for g in games for s in g.seats if s.bot_version_id == remote} == {0, 1}


def test_sprt_remote_bot_that_never_connects_ends_the_run(tmp_path: Path) -> None:
    """A remote entry that never connects ends the run after --remote-timeout with the
    sentence naming it, exit 2, no game stored."""
    db = tmp_path / "a.db"
    _remote_entry(db)
    sprt = _sprt(db, "ann-bot", RANDOM, "--listen", "127.0.0.1:0", "--remote-timeout", "1")
    out, err = sprt.communicate(timeout=120)
    assert sprt.returncode == 2, out + err
    assert "remote bot ann-bot@" in err
    assert "was not connected within 1 s (--remote-timeout); no decision" in err
    assert Repository.open(f"sqlite:///{db}").list_games(limit=100) == []
