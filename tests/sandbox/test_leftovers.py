"""No leftovers after a crash: the game folders of a referee that died are removed by the next
one that starts, never those of a live referee; the doctor's check reports them."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from referee.sandbox.leftovers import (
    find_leftovers,
    leftover_check,
    owner_tag,
    run_folder,
    sweep_leftovers,
)

ROOT = Path(__file__).resolve().parents[2]
SLOW_BOT = ROOT / "tests" / "faults" / "bots" / "slow_bot.py"


def _game_folders(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith("arena-"))


def test_only_folders_of_dead_owners_are_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder named for this (live) process stays; one named for a pid that does not run, or
    for this pid with another start time (a reused pid), is a leftover and is removed."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    live = run_folder("arena-bot-")
    assert live.parent == tmp_path and live.name.startswith(f"arena-bot-{owner_tag()}-")
    pid, start = owner_tag().split(".")
    reused = tmp_path / f"arena-token-{pid}.{int(start) + 1}-abc"
    gone = tmp_path / "arena-game-sock-4194303.12345-def"
    other = tmp_path / "arena-notes-1.1-x"  # not a game folder
    for folder in (reused, gone, other):
        (folder / "code").mkdir(parents=True)
    assert {f.path for f in find_leftovers(tmp_path)} == {reused, gone}
    fine, line = leftover_check(tmp_path)
    assert not fine and "2 game folder(s)" in line and "4194303" in line
    assert sorted(sweep_leftovers(tmp_path)) == sorted([reused, gone])
    assert live.exists() and other.exists() and not reused.exists() and not gone.exists()
    assert leftover_check(tmp_path)[0]


@pytest.mark.slow
def test_a_sigkilled_runner_leaves_folders_the_next_run_removes(tmp_path: Path) -> None:
    """``referee match`` killed with SIGKILL mid-game leaves its game folders; the next
    ``referee match`` using the same temp folder removes them, but not a live referee's."""
    # A temp folder of its own, as open as /tmp (the bots' own uids must reach their copies).
    temp = Path(tempfile.mkdtemp(prefix="leftovers-test-", dir="/tmp"))
    temp.chmod(0o1777)
    try:
        _kill_and_restart(tmp_path, temp)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _kill_and_restart(tmp_path: Path, temp: Path) -> None:
    env = dict(os.environ, TMPDIR=str(temp), PYTHONPATH=str(ROOT))
    match = [sys.executable, "-m", "referee.commands.main", "match"]
    runner = subprocess.Popen(
        [*match, str(SLOW_BOT), "client_sdk.examples.random_bot"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=(tmp_path / "runner.err").open("w"),
    )  # fmt: skip
    deadline = time.monotonic() + 120
    # The game is on once its server's folder is there (the load check's folders come and go
    # before), with both bots' copies.
    while not (
        any(p.name.startswith("arena-server-") for p in _game_folders(temp))
        and sum(p.name.startswith("arena-bot-") for p in _game_folders(temp)) >= 2
    ):
        assert runner.poll() is None, (tmp_path / "runner.err").read_text()
        assert time.monotonic() < deadline, "no game folder appeared"
        time.sleep(0.02)
    runner.send_signal(signal.SIGKILL)
    runner.wait(30)
    left = _game_folders(temp)
    assert left and all(f"-{runner.pid}." in p.name for p in left), left
    assert not leftover_check(temp)[0]
    # A live referee's folder (this test process stands for it) must survive the sweep.
    live = temp / f"arena-bot-{owner_tag()}-live"
    live.mkdir()
    done = subprocess.run(
        [*match, "client_sdk.examples.random_bot", "client_sdk.examples.random_bot", "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not any(p.exists() for p in left), left
    assert _game_folders(temp) == [live]
    assert leftover_check(temp)[0]
