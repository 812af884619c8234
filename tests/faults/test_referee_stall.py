"""The referee's own stalls are not a bot's time: a ``referee match`` process stopped from
outside (SIGSTOP) for longer than a bot's whole clock gives no time forfeit, and its record
notes the stall."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# Every test here starts processes (the CLI and its bots).
pytestmark = pytest.mark.slow

SLOW_BOT = str(Path(__file__).parent / "bots" / "slow_bot.py")
_MOVE_LINE = re.compile(r"^\s+(\d+)\. (RED|BLUE) ")
#: The bots' wall clock, and how long the referee is stopped (longer than the whole clock).
CLOCK_S = 4.0
PAUSE_S = 6.0


def test_a_stopped_referee_charges_no_bot_for_its_pause(tmp_path: Path) -> None:
    """SIGSTOP for 6 s during a game on 4 s wall clocks, then SIGCONT: the game ends by the
    rules, every seat's charged time stays inside its clock, and the record notes the stall."""
    record = tmp_path / "game.json"
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("referee")),
            "match",
            SLOW_BOT,
            "client_sdk.examples.random_bot",
            "--clock",
            "wall",
            "--time",
            f"{CLOCK_S:g}",
            "--param",
            "turn_limit=24",
            "-v",
            "--record",
            str(record),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    try:
        # Stop it once the game is under way (its second move is shown).
        for line in proc.stdout:
            found = _MOVE_LINE.match(line)
            if found and int(found.group(1)) >= 2:
                break
        os.kill(proc.pid, signal.SIGSTOP)
        stopped = time.monotonic()
        while time.monotonic() - stopped < PAUSE_S:
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGCONT)
        proc.stdout.read()
        assert proc.wait(timeout=300) is not None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    data = json.loads(record.read_text())
    referee = data["referee"]
    assert referee["verdict"] in ("normal", "turn_limit"), referee["reason"]
    assert referee["clock"] == "wall"
    for seat in referee["seats"].values():
        assert seat["time_used_s"] < CLOCK_S
    # The pause (less the watch's margins) is noted in the record, not charged.
    assert referee["referee_stalled_s"] > PAUSE_S - 1.0
