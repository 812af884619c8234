"""An accepted move is written into the game's report, and shown to its observer, once the
next request has been handed to the next mover; a game that ends or is stopped before that
request goes out still has every accepted move in its report."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from typing import Any

from client_sdk.proto import referee_pb2 as pb
from engine.adjudication.verdicts import Verdict
from engine.registry import load_game
from referee.match.report import GameReport, MoveLog
from referee.match.runner import MatchRunner
from referee.match.seat import EventKind, SeatEvent

GAME = load_game("tetress")


def _script(seed: int) -> list[str]:
    """A whole random game, as the moves' texts."""
    state, rng, moves = GAME.new_state(), random.Random(seed), []
    while state.outcome() is None:
        move = rng.choice(list(state.legal_moves))
        moves.append(GAME.move_to_text(move))
        state.apply(move)
    return moves


class ScriptedSeat:
    """Answers every move request at once with the script's move for its ply; the write of the
    request for ``hang_at`` never completes (``hanging`` is set when it starts)."""

    def __init__(self, name: str, script: Sequence[str], requested: list[int], hang_at: int = -1):
        self.closed = asyncio.Event()
        self.link_ended = asyncio.Event()
        self.hanging = asyncio.Event()
        self.resume_window = 0.0
        self.resumes = 0
        self.suspended = False
        self._name, self._script, self._requested, self._hang_at = name, script, requested, hang_at
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
            ply = message.move_request.ply
            self._requested.append(ply)
            if ply == self._hang_at:
                self.hanging.set()
                await asyncio.Event().wait()
            assert self._inbox is not None
            move = pb.Move(game_id=message.move_request.game_id, ply=ply, action=self._script[ply])
            self._inbox.put_nowait(SeatEvent(self._seat, EventKind.MOVE, time.monotonic(), move))
        return time.monotonic()

    async def send_quietly(self, message: pb.RefereeMessage) -> bool:
        return True

    async def error(self, code: int, message: str, game_id: str = "", fatal: bool = False) -> None:
        return None


class Seen:
    """Observer: each move shown, with the plies requested by then."""

    def __init__(self, requested: list[int]) -> None:
        self.requested = requested
        self.moves: list[tuple[int, int]] = []

    def on_move(self, state: Any, move: MoveLog, clocks: Any) -> None:
        self.moves.append((move.ply, max(self.requested)))

    def on_end(self, state: Any, report: GameReport) -> None:
        return None


def test_a_move_is_recorded_once_the_next_request_is_out() -> None:
    """A whole game: every move is in the report once, in order, and each but the last was
    shown to the observer after the next ply's request had been handed out."""
    script = _script(3)
    requested: list[int] = []
    seats = [ScriptedSeat(n, script, requested) for n in ("red", "blue")]
    seen = Seen(requested)

    async def main() -> GameReport:
        return await MatchRunner(GAME, seats, observer=seen).run()

    report = asyncio.run(main())
    assert report.end is not None and report.end.verdict in (Verdict.NORMAL, Verdict.TURN_LIMIT)
    assert [m.action for m in report.moves] == script
    assert [ply for ply, _ in seen.moves] == list(range(len(script)))
    assert all(asked == ply + 1 for ply, asked in seen.moves[:-1]), seen.moves
    assert seen.moves[-1] == (len(script) - 1, len(script) - 1)


def test_a_game_stopped_while_a_request_is_written_keeps_the_moves_before() -> None:
    """The write of ply 6's request never completes and the game is aborted meanwhile: the six
    moves accepted before it are in the report and were shown to the observer."""
    script = _script(5)
    requested: list[int] = []
    seats = [ScriptedSeat(n, script, requested, hang_at=6) for n in ("red", "blue")]
    seen = Seen(requested)

    async def main() -> GameReport:
        runner = MatchRunner(GAME, seats, observer=seen)
        game = asyncio.create_task(runner.run())
        await seats[0].hanging.wait()
        runner.abort("stopped for the test")
        return await game

    report = asyncio.run(main())
    assert report.end is not None and report.end.verdict == Verdict.ABORTED
    assert [m.action for m in report.moves] == script[:6]
    assert [ply for ply, _ in seen.moves] == list(range(6))
