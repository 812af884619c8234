"""Bots run as real `python -m client_sdk` subprocesses against the real referee server on
127.0.0.1: several games over one stream, course bots unchanged, verdicts, reconnection."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from client_sdk.testing import play_local
from engine.registry import load_game
from referee.match.runner import GameReport, MatchRunner
from referee.play.local import BotDidNotConnect, LocalReferee, local_referee
from referee.server.session import BotSession

# Every test here starts processes (bots, the CLI, fresh interpreters).
pytestmark = pytest.mark.slow

BOTS = Path(__file__).parent / "bots"
EXAMPLES = Path(__file__).resolve().parents[2] / "client_sdk" / "examples"


@dataclass
class Bot:
    """A bot process started with `python -m client_sdk`; its stderr is read as it comes
    (so a chatty bot never blocks on a full pipe)."""

    proc: asyncio.subprocess.Process
    lines: list[str] = field(default_factory=list)
    stdout: bytes = b""
    _grew: asyncio.Event = field(default_factory=asyncio.Event)
    _reader: asyncio.Task[None] | None = None

    def __post_init__(self) -> None:
        self._reader = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        assert self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            self.lines.append(line.decode())
            self._grew.set()
        self._grew.set()

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    async def finish(self, timeout: float = 60.0) -> int:
        """Wait for the process to exit by itself; returns its exit code."""
        assert self.proc.stdout is not None and self._reader is not None
        self.stdout = await asyncio.wait_for(self.proc.stdout.read(), timeout)
        await asyncio.wait_for(self._reader, timeout)
        return await asyncio.wait_for(self.proc.wait(), timeout)

    async def wait_for_line(self, words: str, timeout: float = 30.0) -> None:
        """Wait until a stderr line containing ``words`` has appeared."""

        async def scan() -> None:
            assert self._reader is not None
            while not any(words in line for line in self.lines):
                if self._reader.done():
                    raise AssertionError(f"no line with {words!r}:\n{self.stderr}")
                self._grew.clear()
                await self._grew.wait()

        await asyncio.wait_for(scan(), timeout)


RANDOM_BOT = "client_sdk.examples.random_bot"


async def start_bot(address: str, token: str, bot: str, *extra: str) -> Bot:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client_sdk",
        "--server",
        address,
        "--token",
        token,
        bot,
        *extra,
        # A pipe nobody writes to: a bot that read the real stdin would hang here.
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    return Bot(proc)


async def session(ref: LocalReferee, player: str, bot: Bot) -> BotSession:
    """``player``'s session on ``ref``; a failure shows what the bot printed."""
    try:
        return await ref.session(player, timeout=30.0)
    except BotDidNotConnect:
        raise AssertionError(f"{player} never connected:\n{bot.stderr}") from None


async def play(sessions: Sequence[BotSession], game: str = "tetress") -> GameReport:
    return await MatchRunner(load_game(game), sessions).run()


def test_course_bots_unchanged_over_several_games_on_one_stream() -> None:
    """A course package with NumPy, relative imports, a helper package and prints, and one
    that reads stdin, play two games over one session each; prints reach stderr only."""

    async def main() -> tuple[list[GameReport], Bot, Bot]:
        async with local_referee() as ref:
            address = ref.address
            fancy = await start_bot(
                address, ref.token("fancy"), str(BOTS / "fancy_bot"), "--games=2"
            )
            reader = await start_bot(
                address, ref.token("stdin"), f"{BOTS / 'recorder_bot'}:StdinBot", "--games=2"
            )
            a = await session(ref, "fancy", fancy)
            b = await session(ref, "stdin", reader)
            first = await play([a, b])
            second = await play([b, a])
            assert await fancy.finish() == 0, fancy.stderr
            assert await reader.finish() == 0, reader.stderr
            return [first, second], fancy, reader

    reports, fancy, reader = asyncio.run(main())
    for report in reports:
        assert report.end is not None
        assert report.end.verdict in ("normal", "turn_limit"), report.end.reason
        assert all(seat.peak_rss_bytes > 0 for seat in report.seats)
        assert all(move.think_time_s >= 0 for move in report.moves)
    assert fancy.stdout == b"" and reader.stdout == b""
    err = fancy.stderr
    assert "fancy_bot: playing RED" in err and "fancy_bot: playing BLUE" in err
    assert "2 game(s)" in err
    assert "CALL stdin ''" in reader.stderr


def test_sdk_and_course_examples_and_faults_over_the_network(tmp_path: Path) -> None:
    """On one server at once: the SDK greedy bot and the course greedy bot (searching on the
    course Board) play to a rules ending; a course bot returning None loses by illegal move;
    a file bot that raises loses by runtime error; play_local says the very same sentences."""
    crash = tmp_path / "crashbot.py"
    crash.write_text(
        "def choose_move(state, clocks):\n    raise RuntimeError('boom in my search')\n"
    )

    async def main() -> list[GameReport]:
        players = ["greedy", "cgreedy", "none", "rnd1", "crash", "rnd2"]
        async with local_referee() as ref:
            specs = {
                "greedy": "client_sdk.examples.greedy_bot",
                "cgreedy": str(EXAMPLES / "course_greedy"),
                "none": f"{BOTS / 'recorder_bot'}:NoneBot",
                "rnd1": "client_sdk.examples.random_bot",
                "crash": str(crash),
                "rnd2": str(EXAMPLES / "course_random"),
            }
            bots = {
                p: await start_bot(ref.address, ref.token(p), spec, "--games=1")
                for p, spec in specs.items()
            }
            s = {p: await session(ref, p, bots[p]) for p in players}
            reports = await asyncio.gather(
                play([s["greedy"], s["cgreedy"]]),
                play([s["none"], s["rnd1"]]),
                play([s["rnd2"], s["crash"]]),
            )
            for bot in bots.values():
                assert await bot.finish() == 0, bot.stderr
            return list(reports)

    normal, none, crashed = asyncio.run(main())
    assert normal.end is not None and normal.end.verdict in ("normal", "turn_limit")
    assert none.end is not None and none.end.verdict == "illegal_move"
    assert none.end.winner == 1 and "None" in none.end.reason
    assert crashed.end is not None and crashed.end.verdict == "runtime_error"
    assert crashed.end.winner == 0
    # The local referee and the real one share the adjudicator: same verdicts, same words.
    local_none = play_local(f"{BOTS / 'recorder_bot'}:NoneBot", "random", seat=0)
    assert (local_none.verdict, local_none.reason) == (none.end.verdict, none.end.reason)
    local_crash = play_local(str(crash), str(EXAMPLES / "course_random"), seat=1)
    assert (local_crash.verdict, local_crash.reason) == (crashed.end.verdict, crashed.end.reason)


def test_bot_started_before_the_server_waits_for_it() -> None:
    """A bot told to wait for its referee (--wait-for-server) plays once the referee is up."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"127.0.0.1:{port}"

    async def main() -> GameReport:
        token = "early-bird-token"
        early = await start_bot(
            address, token, "client_sdk.examples.random_bot", "--wait-for-server=120"
        )
        await asyncio.sleep(1.0)  # not a wait: the referee comes up later, whatever the bot does
        async with local_referee(address=address, tokens={token: "early"}) as ref:
            late = await start_bot(ref.address, ref.token("late"), "client_sdk.examples.random_bot")
            sessions = [await session(ref, "early", early), await session(ref, "late", late)]
            report = await play(sessions)
            for s in sessions:
                await s.goodbye("done")
            assert await early.finish() == 0, early.stderr
            assert await late.finish() == 0, late.stderr
            return report

    report = asyncio.run(main())
    assert report.end is not None and report.end.verdict in ("normal", "turn_limit")


async def _serve(port: int, *flags: str) -> asyncio.subprocess.Process:
    """`referee serve` on a fixed local port, as its own process (so it can be killed)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "referee.commands.main",
        "serve",
        "--listen",
        f"127.0.0.1:{port}",
        "--game",
        "tetress",
        "--log-format",
        "json",
        *flags,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    return proc


def test_bots_reconnect_when_the_referee_dies_and_play_on() -> None:
    """When the referee process is killed mid-session, bots back off, reconnect to the new
    one, and still play their number of games (a game lost with the old referee counts)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"127.0.0.1:{port}"

    async def main() -> list[Bot]:
        first = await _serve(port)
        bots = [
            await start_bot(address, "any", RANDOM_BOT, "--games=3", "--wait-for-server=120"),
            await start_bot(
                address,
                "any",
                str(EXAMPLES / "course_random"),
                "--games=3",
                "--wait-for-server=120",
            ),
        ]
        try:
            for bot in bots:
                await bot.wait_for_line("playing")
            first.kill()
            await first.wait()
            for bot in bots:
                await bot.wait_for_line("retrying in")
            second = await _serve(port)
            try:
                codes = [await bot.finish() for bot in bots]
            finally:
                second.terminate()
                await second.wait()
        finally:
            for bot in bots:
                if bot.proc.returncode is None:
                    bot.proc.kill()
        assert codes == [0, 0], [b.stderr for b in bots]
        return bots

    bots = asyncio.run(main())
    for bot in bots:
        assert "connection lost" in bot.stderr
        assert "3 game(s)" in bot.stderr


def test_a_remote_bot_stuck_in_a_loop_is_told_it_lost_on_time(tmp_path: Path) -> None:
    """A remote bot whose move never comes back (a loop in its search) loses on time, and the
    SDK prints the referee's GameOver at once, while the bot's code is still looping: the
    result, the time ending and that its move will not be sent."""
    from referee.match.clock import TimeControl

    looping = tmp_path / "loopbot.py"
    looping.write_text("def choose_move(state, clocks):\n    while True:\n        pass\n")

    async def main() -> tuple[GameReport, Bot]:
        async with local_referee() as ref:
            bots = {
                "loop": await start_bot(ref.address, ref.token("loop"), str(looping), "--games=1"),
                "rnd": await start_bot(ref.address, ref.token("rnd"), RANDOM_BOT, "--games=1"),
            }
            s = {p: await session(ref, p, bots[p]) for p in bots}
            control = TimeControl(game_time_s=1.0, move_time_s=0.0, grace_s=0.5)
            runner = MatchRunner(load_game("tetress"), [s["loop"], s["rnd"]], time_control=control)
            report = await runner.run()
            try:
                await bots["loop"].wait_for_line("lost on time")
            finally:
                bots["loop"].proc.kill()
                await bots["loop"].proc.wait()
                assert await bots["rnd"].finish() == 0, bots["rnd"].stderr
            return report, bots["loop"]

    report, loop = asyncio.run(main())
    assert report.end is not None and report.end.verdict == "time" and report.end.winner == 1
    told = next(line for line in loop.lines if "lost on time" in line)
    assert "still thinking" in told and report.end.reason in told
