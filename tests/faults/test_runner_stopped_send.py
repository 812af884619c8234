"""A referee stopped while a move request is being written charges the bot nothing for the
pause: the runner's wait on the write is a wake-up, not a verdict, and the clock decides."""

from __future__ import annotations

import asyncio
import time

from client_sdk.proto import referee_pb2 as pb
from engine.adjudication.verdicts import Verdict
from engine.registry import load_game
from referee.match.clock import ClockMode, TimeControl
from referee.match.runner import MatchRunner
from referee.match.seat import EventKind, SeatEvent

#: The mover's whole clock, and how long the referee's loop is stopped (longer than the clock).
CLOCK_S = 1.0
PAUSE_S = 1.6


class PausingSeat:
    """A seat on one event loop that stops the loop (as SIGSTOP would) while its first move
    request is being written, then answers that request with ``answer``."""

    def __init__(self, name: str, *, pause: bool, answer: str = "") -> None:
        self.closed = asyncio.Event()
        self.link_ended = asyncio.Event()
        self.resume_window = 0.0
        self.resumes = 0
        self.suspended = False
        self._name = name
        self._pause = pause
        self._answer = answer
        self._inbox: asyncio.Queue[SeatEvent] | None = None
        self._seat = -1

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
        self._inbox, self._seat = inbox, seat

    def detach(self, game_id: str) -> None:
        self._inbox = None

    async def send_bytes(self, data: bytes) -> float:
        message = pb.RefereeMessage.FromString(data)
        if message.WhichOneof("kind") == "move_request":
            if self._pause:
                self._pause = False
                # The whole loop stops for longer than the mover's clock while this write is
                # in flight; the write completes once the referee runs again.
                asyncio.get_running_loop().call_soon(time.sleep, PAUSE_S)
                await asyncio.sleep(0.3)  # not a wait: the write stays in flight
            assert self._inbox is not None
            request = message.move_request
            move = pb.Move(game_id=request.game_id, ply=request.ply, action=self._answer)
            event = SeatEvent(self._seat, EventKind.MOVE, time.monotonic(), move)
            self._inbox.put_nowait(event)
        return time.monotonic()

    async def send_quietly(self, message: pb.RefereeMessage) -> bool:
        return True

    async def error(self, code: int, message: str, game_id: str = "", fatal: bool = False) -> None:
        return None


def test_a_pause_during_a_request_write_is_not_a_time_forfeit() -> None:
    """The loop is stopped for 1.6 s while RED's request (1 s wall clock) is written: RED's
    answer is judged on its merits (here an illegal move), not forfeited on time."""
    control = TimeControl(game_time_s=CLOCK_S, move_time_s=CLOCK_S, clock=ClockMode.WALL)
    seats = [
        PausingSeat("paused", pause=True, answer="not a move"),
        PausingSeat("other", pause=False),
    ]

    async def main() -> Verdict | None:
        report = await MatchRunner(load_game("att"), seats, time_control=control).run()
        assert report.end is not None
        return report.end.verdict

    verdict = asyncio.run(main())
    assert verdict is Verdict.ILLEGAL_MOVE
