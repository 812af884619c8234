"""CPU clocks under load: a launched bot's charged time does not depend on how busy the machine
is when the clock counts CPU, and does when it counts wall time; a bot that sleeps forever on a
CPU clock is ended by the wall-clock backstop."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from engine.registry import load_game
from referee.match.clock import ClockMode, TimeControl
from referee.match.report import GameReport
from referee.play.local import local_referee
from referee.sandbox.launch import BotSpec

# Every test here starts processes (bots, hogs, the CLI).
pytestmark = pytest.mark.slow

BURN_BOT = str(Path(__file__).parent / "bots" / "burn_bot.py")
#: Plies per game: every one of them burns the same CPU time in the same position.
PLIES = 10

# A CPU hog: one busy process pinned to a core, at a priority given on its command line (a
# higher one where the test may set it, so that the machine's other load, whatever it is,
# cannot hide the hog's effect on the core the bot runs on). Each hog leads its own session,
# and where the kernel groups the scheduling of sessions (autogroup) its group gets the
# priority too: a nice value alone is weighed only against its own session's processes.
_HOG = """
import os, sys
os.sched_setaffinity(0, {int(sys.argv[1])})
for set_priority in (
    lambda n: os.nice(n),
    lambda n: open("/proc/self/autogroup", "w").write(str(n)),
):
    try:
        set_priority(int(sys.argv[2]))
    except OSError:
        pass
while True:
    pass
"""


@contextmanager
def hogs() -> Iterator[None]:
    """Saturate every core. The bot's core gets the hogs that starve it: one at nice -10 where
    the priority may be raised (it takes about nine tenths of the core), else two at nice 0
    (two thirds). Each other core gets one at nice 19: it keeps the core busy without taking
    it from the referee or from the machine's other work."""
    cores = sorted(os.sched_getaffinity(0))
    may_raise = os.geteuid() == 0
    plan = [(cores[0], -10)] if may_raise else [(cores[0], 0), (cores[0], 0)]
    plan += [(core, 19) for core in cores[1:]]
    procs = []
    try:
        for core, niceness in plan:
            argv = [sys.executable, "-c", _HOG, str(core), str(niceness)]
            procs.append(subprocess.Popen(argv, start_new_session=True))
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def _play(clock: ClockMode) -> GameReport:
    """One game between two burn bots on ``clock`` (a budget no bot comes near)."""
    game = load_game("tetress", turn_limit=PLIES)
    control = TimeControl(game_time_s=600, clock=clock)

    async def main() -> GameReport:
        async with local_referee() as ref:
            bots = [BotSpec("sdk", BURN_BOT), BotSpec("sdk", BURN_BOT)]
            result = await ref.play(game, bots, time_control=control, connect_timeout=120)
            return result.report

    report = asyncio.run(main())
    end = report.end
    assert end is not None and not end.verdict.is_fault, end.reason
    assert report.plies == PLIES and report.time_control.clock is clock
    return report


def test_cpu_clock_charges_the_same_idle_and_loaded_and_wall_clock_does_not() -> None:
    """The same game, played idle and with every core saturated: on CPU clocks the charged time
    differs by less than 15%, on wall clocks it grows by at least half again."""
    idle = {clock: _play(clock) for clock in (ClockMode.CPU, ClockMode.WALL)}
    with hogs():
        loaded = {clock: _play(clock) for clock in (ClockMode.CPU, ClockMode.WALL)}
    charged = {
        (name, clock): sum(seat.time_used_s for seat in runs[clock].seats)
        for name, runs in (("idle", idle), ("loaded", loaded))
        for clock in (ClockMode.CPU, ClockMode.WALL)
    }
    print({f"{k[0]}/{k[1]}": round(v, 3) for k, v in charged.items()})
    cpu_idle, cpu_loaded = charged["idle", ClockMode.CPU], charged["loaded", ClockMode.CPU]
    wall_idle, wall_loaded = charged["idle", ClockMode.WALL], charged["loaded", ClockMode.WALL]
    # Every move burned its CPU: the CPU clock charged at least that.
    assert cpu_idle >= PLIES * 0.05
    assert abs(cpu_loaded - cpu_idle) / cpu_idle < 0.15
    assert wall_loaded > 1.5 * wall_idle
    # On either clock, every move's record has its wall time and its CPU time.
    for report in (*idle.values(), *loaded.values()):
        assert all(m.cpu_s is not None and m.wall_s is not None for m in report.moves)
        assert all(seat.cpu_method for seat in report.seats)


def test_a_bot_sleeping_forever_on_a_cpu_clock_ends_by_the_backstop(tmp_path: Path) -> None:
    """``referee match`` (CPU clocks by default) ends a bot that sleeps in its move after 3x its
    move limit plus 5 s, with a sentence naming the backstop, and records the clock charged."""
    sleeper = f"cmd:{sys.executable} {Path(__file__).parent / 'bots' / 'faultbot.py'}"
    sleeper += " --server {server} --token {token} --fault sleep --at 2"
    record = tmp_path / "game.json"
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("referee")),
            "match",
            "client_sdk.examples.random_bot",
            sleeper,
            "--move-time",
            "1",
            "--record",
            str(record),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["verdict"] == "time" and summary["offender"] == "BLUE", summary
    assert summary["clock"] == "cpu"
    reason = summary["reason"]
    assert reason.startswith("BLUE ran out of wall time: no answer for ply"), reason
    assert "the backstop of a CPU clock, 8.00 s" in reason
    data = json.loads(record.read_text())
    assert data["tags"]["Clock"] == "cpu"
