"""The shipped test double, `referee.play.local.local_referee`: a real referee on 127.0.0.1
port 0 with launched bots. It plays games, judges bots that never connect, and leaves no
process or server behind however the block ends."""

from __future__ import annotations

import asyncio
import socket

import psutil
import pytest
from rawbots import sdk_bot

from engine.registry import load_game
from referee.play.local import BotDidNotConnect, LocalReferee, MatchResult, local_referee
from referee.sandbox.launch import BotSpec

pytestmark = pytest.mark.slow


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _listening(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    with socket.socket() as probe:
        return probe.connect_ex((host, int(port))) == 0


def test_play_runs_a_game_and_the_block_leaves_nothing_behind() -> None:
    """Two launched SDK bots finish a game; afterwards no bot process runs and the port is shut."""

    async def main() -> tuple[MatchResult, str, list[int]]:
        async with local_referee() as ref:
            assert _listening(ref.address)
            result = await ref.play(load_game("att"), [sdk_bot(), sdk_bot()])
            return result, ref.address, [bot.pid for bot in ref.bots]

    result, address, pids = asyncio.run(main())
    end = result.report.end
    assert end is not None and end.verdict in ("normal", "turn_limit"), end
    assert len(pids) == 2 and not any(_alive(pid) for pid in pids)
    assert not _listening(address)
    assert result.report.seats[0].memory_method in ("rss_poll", "cgroup")


def test_a_seat_that_never_connects_or_exits_first_loses_it() -> None:
    """A bot that never connects loses by disconnect; one that exits first by a runtime error
    naming its exit; the game is never played."""
    silent = BotSpec("command", "sleep 30")
    quitter = BotSpec("command", "sh -c 'echo giving up; exit 3'")

    async def main() -> tuple[MatchResult, MatchResult]:
        async with local_referee() as ref:
            game = load_game("tetress")
            late = ref.play(game, [silent, sdk_bot()], connect_timeout=8.0)
            gone = ref.play(game, [sdk_bot(), quitter], connect_timeout=20.0)
            first, second = await asyncio.gather(late, gone)
            return first, second

    late, gone = asyncio.run(main())
    assert late.report.end is not None and late.report.end.verdict == "disconnect"
    assert late.report.end.offender == 0 and "did not connect in time" in late.report.end.reason
    assert late.report.plies == 0
    end = gone.report.end
    assert end is not None and end.verdict == "runtime_error" and end.offender == 1
    assert "exited before connecting (exited with code 3)" in end.reason
    assert "giving up" in end.reason


def test_session_names_a_bot_that_did_not_connect_with_its_output() -> None:
    """`session()` raises BotDidNotConnect carrying what the bot printed."""

    async def main() -> None:
        async with local_referee() as ref:
            bot = await ref.launch(BotSpec("command", "sh -c 'echo no such server'"), "p")
            await ref.session("p", bot, timeout=20)

    with pytest.raises(BotDidNotConnect, match="no such server"):
        asyncio.run(main())


def test_cancelling_a_game_stops_its_bots() -> None:
    """Cancelling the caller mid-game still stops every launched process and the server."""
    seen: list[int] = []
    address = ""

    async def main() -> None:
        nonlocal address
        async with local_referee() as ref:
            address = ref.address
            task = asyncio.create_task(_forever_game(ref))
            while len(ref.bots) < 2 or not all(_alive(b.pid) for b in ref.bots):
                await asyncio.sleep(0.05)
            # Mid-game: the SDK bot has connected (the other never will) and waits for it.
            since = ref.server.lobby.generation
            while len(ref.server.lobby) < 1:
                await ref.server.lobby.wait_change(since)
                since = ref.server.lobby.generation
            seen.extend(bot.pid for bot in ref.bots)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())
    assert len(seen) == 2 and not any(_alive(pid) for pid in seen)
    assert not _listening(address)


async def _forever_game(ref: LocalReferee) -> MatchResult:
    slow = BotSpec("sdk", "client_sdk.examples.greedy_bot")
    return await ref.play(load_game("tetress"), [slow, BotSpec("command", "sleep 60")])
