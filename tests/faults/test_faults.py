"""Misbehaving bots as real subprocesses: every fault ends its own game with the right verdict
and sentence, the opponent wins and is told, and the server keeps serving the other games
(all of them run at once on one server, next to healthy games)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import psutil
import pytest
from fault_helpers import Proxy, faultbot, sdk_bot

from engine.registry import load_game
from referee.match.clock import TimeControl
from referee.match.records import write_record_file
from referee.play.local import LocalReferee, MatchResult, local_referee

# Every test here starts processes (bots, the CLI, fresh interpreters).
pytestmark = pytest.mark.slow

SLOW_BOT = str(Path(__file__).parent / "bots" / "slow_bot.py")

#: fault -> (verdict, words the sentence must contain; "a|b": either)
CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "raise": ("runtime_error", ("crashed (exited with code 1)", "RuntimeError: my evaluation")),
    "segfault": ("runtime_error", ("crashed (killed by signal SIGSEGV",)),
    "exit": ("runtime_error", ("crashed (exited with code 3)",)),
    # Launched bots play on CPU clocks: a busy loop runs out of CPU time (or, on a machine so
    # busy that it gets less than a fifth of a core, meets the backstop first), a sleeper is
    # ended by the wall-clock backstop.
    "hang": ("time", ("exceeded its CPU time: used|ran out of wall time: no answer for ply",)),
    "sleep": ("time", ("ran out of wall time: no answer for ply", "the backstop of a CPU clock")),
    "noterm": ("time", ("ran out of wall time: no answer for ply",)),
    "flood": ("protocol_error", ("flooded its stream: more than 400 unrequested",)),
    "oversized": ("protocol_error", ("bytes (at most 65536 bytes are accepted)",)),
    "huge": ("protocol_error", ("sent a message of 3", "at most 65536 bytes are accepted")),
    "malformed": ("protocol_error", ("could not be decoded",)),
    "drop": ("disconnect", ("disconnected (", "did not reconnect within 3 s")),
    "hog": ("memory", ("exceeded its memory: peak", "MB of 200 MB (")),
    "reportmem": ("memory", ("exceeded its memory: peak 300.0 MB of 200 MB (self-reported)",)),
    "notamove": ("illegal_move", ("returned None, which is not a PlaceAction",)),
}
# A backstop of 1x + 1 s keeps the sleepers' games as short as the busy loop's.
TC = TimeControl(
    game_time_s=120, move_time_s=5.0, grace_s=0.5, backstop_factor=1.0, backstop_extra_s=1.0
)
# A frozen connection must be noticed by keep-alive (about 2 s here) long before its clock
# runs out; a fault that is not about time is never met by a clock first.
TC_PATIENT = TimeControl(game_time_s=120, move_time_s=60.0, grace_s=0.5)


async def _cut_when_playing(proxy: Proxy, action: str, delay: float) -> None:
    """Once the bot behind ``proxy`` is well into its game (several move requests have gone
    through), wait ``delay`` s then reset or freeze the proxy."""
    while proxy.forwarded < 4_000:
        await asyncio.sleep(0.05)
    await asyncio.sleep(delay)  # not a wait: how far into the game the fault comes
    proxy.reset() if action == "reset" else proxy.freeze()


def _gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie has; so has a pid that vanishes as we look)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_every_fault_gets_its_verdict_while_the_server_keeps_serving(tmp_path: Path) -> None:
    """Each misbehaving bot loses its own game with its verdict and sentence, the opponent wins
    and hears the result, nothing it launched survives, and healthy games (one of them
    resuming after a cut connection, through the SDK's own reconnect) finish normally."""
    att = load_game("att")
    tetress = load_game("tetress")

    async def main() -> dict[str, MatchResult]:
        async with local_referee(resume_window=3.0, keepalive_s=1.0) as ref:
            cut, frozen = Proxy(ref.address), Proxy(ref.address)
            await cut.start()
            await frozen.start()
            try:
                return await _play_all(ref, cut, frozen)
            finally:
                await cut.close()
                await frozen.close()

    async def _play_all(ref: LocalReferee, cut: Proxy, frozen: Proxy) -> dict[str, MatchResult]:
        play = ref.play
        games = {}
        for fault, (verdict, _) in CASES.items():
            game = tetress if fault == "notamove" else att
            games[fault] = play(
                game,
                [faultbot(), faultbot(fault, at=3)],
                # Only the clock faults need the short backstop; the others end their games by
                # themselves, and on a starved machine a flood may take longer than 6 s to send.
                time_control=TC if verdict == "time" else TC_PATIENT,
                memory_mb=200,
                remote=(False, fault == "reportmem"),
            )
        games["healthy"] = play(att, [sdk_bot(), sdk_bot()], time_control=TC)
        games["resume"] = play(att, [faultbot(), faultbot("resume", at=5)], time_control=TC)
        slow = [faultbot(), sdk_bot(SLOW_BOT)]
        games["sdkresume"] = play(att, slow, time_control=TC, via=(None, cut.address))
        games["stall"] = play(att, slow, time_control=TC_PATIENT, via=(None, frozen.address))
        cutter = asyncio.create_task(_cut_when_playing(cut, "reset", 0.2))
        freezer = asyncio.create_task(_cut_when_playing(frozen, "freeze", 0.2))
        results = await asyncio.gather(*games.values())
        cutter.cancel()
        freezer.cancel()
        return dict(zip(games, results, strict=True))

    played = asyncio.run(main())
    for fault, (verdict, words) in CASES.items():
        report = played[fault].report
        end = report.end
        assert end is not None
        assert end.verdict == verdict, (fault, end)
        assert end.offender == 1 and end.winner == 0, (fault, end)
        for word in words:
            assert any(w in end.reason for w in word.split("|")), (fault, end.reason)
        assert end.reason.startswith(report.seat_names[1]), (fault, end.reason)
        # The opponent was told the result on its stream.
        opponent = played[fault].bots[0].output.text()
        assert f"game over: {end.reason}" in opponent, (fault, opponent)
        # Nothing either bot started is left running.
        for bot in played[fault].bots:
            assert _gone(bot.pid), (fault, bot.pid)
    for name in ("healthy", "resume", "sdkresume"):
        end = played[name].report.end
        assert end is not None and end.verdict in ("normal", "turn_limit"), (name, end)
    assert played["resume"].report.seats[1].reconnects == 1
    assert played["sdkresume"].report.seats[1].reconnects >= 1
    stall = played["stall"].report.end
    assert stall is not None and stall.verdict == "disconnect", stall
    assert stall.offender == 1 and "did not reconnect within 3 s" in stall.reason

    # The crash keeps the bot's traceback for its author; the record says how it ended.
    raised = played["raise"].report
    assert "RuntimeError: my evaluation blew up" in raised.seats[1].output
    assert "exited with code 1" in raised.seats[1].exit
    record = tmp_path / "raise.pgn"
    write_record_file(record, raised, att)
    text = record.read_text()
    side = tmp_path / f"raise.pgn.{raised.seat_names[1].lower()}.log"
    assert f'Output "{side.name}"' in text and "RuntimeError" in side.read_text()
    assert 'Exit "crashed' not in text and "exited with code 1" in text
    # Memory: the sandbox's figure for launched bots, the bot's own for remote ones.
    hog = played["hog"].report.seats[1]
    assert hog.memory_measured_by in ("rss_poll", "cgroup"), hog
    assert hog.peak_memory_bytes > 200 << 20, hog
    assert played["reportmem"].report.seats[1].memory_measured_by == "self-reported"
    assert "SIGKILL after grace" in played["noterm"].report.seats[1].exit
    assert os.getpid()  # the referee itself is unharmed: we are still here
