"""The constructor rule: a bot's agent is made (constructor, ``on_game_start``) at its first
move request, and the time that takes is charged to its clock, as the course charges it.

The sleeping constructor gives lower bounds only (a sleep lasts at least its length), so the
assertions hold on a loaded machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from client_sdk.testing import play_local

ROOT = Path(__file__).resolve().parents[2]
SLEEPY = str(Path(__file__).parent / "bots" / "sleepy_init")


def test_play_local_charges_the_constructor(monkeypatch: pytest.MonkeyPatch) -> None:
    """In play_local, a constructor sleeping past the whole budget loses on time at the bot's
    first move."""
    monkeypatch.setenv("SLEEPY_INIT_S", "0.4")
    game = play_local(SLEEPY, "course-random", seat=0, time_per_game=0.2, grace=0.05)
    assert game.verdict == "time" and game.offender == 0
    assert game.plies == 0
    assert game.think_time_s[0] >= 0.4


def test_play_local_charges_blues_constructor_made_after_reds_move(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Blue's agent is made when Red's first action is reported to it, outside its own turn;
    that time is still on Blue's clock (at its first move)."""
    monkeypatch.setenv("SLEEPY_INIT_S", "0.3")
    game = play_local(SLEEPY, "random", seat=1)
    assert game.think_time_s[1] >= 0.3


@pytest.mark.slow
def test_the_referee_charges_a_constructor_made_while_the_opponent_thinks() -> None:
    """Over the network (referee match, launched bots, a wall clock: the bots sleep rather than
    compute): Blue's constructor sleeps 1 s while
    Red thinks 1.2 s over its first move; Blue is still charged its constructor (at least
    1 s), so Red, out of time at its second move, loses at ply 2."""
    done = subprocess.run(
        [sys.executable, "-m", "referee.commands.main", "match", f"{SLEEPY}:SlowMover", SLEEPY,
         "--time", "2", "--grace", "0.1", "--clock", "wall", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["verdict"] == "time" and report["offender"] == "RED", report
    assert report["plies"] == 2
    assert report["seats"]["BLUE"]["time_used_s"] >= 1.0
