"""A move request whose write never completes (a bot that stopped reading its stream, so flow
control holds the referee's write) still counts against the bot's clock: on a wall clock and
on a CPU clock the game ends with the bot's time-out, and the referee is not stuck."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from client_sdk.proto import referee_pb2 as pb
from engine.adjudication import ClockMode, TimeControl
from engine.registry import load_game
from referee.match.runner import MatchRunner
from referee.match.seat import SeatEvent


class StuckSeat:
    """A seat whose GameStart is written but whose move requests never finish writing."""

    def __init__(self, name: str) -> None:
        self.closed = asyncio.Event()
        self.link_ended = asyncio.Event()
        self.resume_window = 0.0
        self.resumes = 0
        self.suspended = False
        self._name = name
        self.requests = 0

    @property
    def name(self) -> str:
        return self._name

    @property
    def version(self) -> str:
        return "1"

    @property
    def resumable(self) -> bool:
        return False

    def attach(self, game_id: str, seat: int, inbox: asyncio.Queue[SeatEvent]) -> None:
        return None

    def detach(self, game_id: str) -> None:
        return None

    async def send_bytes(self, data: bytes) -> float:
        if pb.RefereeMessage.FromString(data).WhichOneof("kind") == "move_request":
            self.requests += 1
            await asyncio.Event().wait()  # held by flow control for good
        return asyncio.get_running_loop().time()

    async def send_quietly(self, message: pb.RefereeMessage) -> bool:
        return True

    async def error(self, code: int, message: str, game_id: str = "", fatal: bool = False) -> None:
        return None


@pytest.mark.parametrize("clock", [ClockMode.WALL, ClockMode.CPU])
def test_a_request_that_cannot_be_written_ends_in_the_movers_time_out(clock: ClockMode) -> None:
    """Red's first request never finishes writing: Red loses on time (its move limit of
    0.2 s; on a CPU clock its wall backstop), whichever clock the game runs on; Blue was never
    asked for a move."""
    control = TimeControl(
        game_time_s=60,
        move_time_s=0.2,
        grace_s=0.05,
        clock=clock,
        backstop_factor=1.0,
        backstop_extra_s=0.3,
    )
    seats = [StuckSeat("red"), StuckSeat("blue")]
    meters: list[Any] = [lambda: 0.0, lambda: 0.0] if clock is ClockMode.CPU else [None, None]

    async def main() -> Any:
        runner = MatchRunner(load_game("tetress"), seats, time_control=control, cpu_meters=meters)
        async with asyncio.timeout(30):
            return await runner.run()

    report = asyncio.run(main())
    assert report.end is not None
    assert report.end.verdict == "time", report.end
    assert (report.end.offender, report.end.winner) == (0, 1)
    assert (seats[0].requests, seats[1].requests) == (1, 0)
