"""The match runner: the I/O around one game's :class:`~engine.adjudication.Adjudicator`.

The adjudicator decides (whose turn, what a move costs, whether it is legal, which verdict and
sentence end the game); the runner talks to the two bot sessions: it sends the mover its
request, waits on the game's queue (fed by the sessions' reader tasks) until the seat's
deadline, hands the answer (or the timeout, the crash, the drop ...) to the adjudicator, and
announces the end. It never raises because of what a bot did.
It measures (:mod:`.timing`) what the adjudicator charges: wall time less the referee's own
stalls, and a launched seat's CPU time.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar

import structlog

from client_sdk.proto import referee_pb2 as pb
from engine.adjudication import (
    Accepted,
    Adjudicator,
    Answer,
    Disconnected,
    Measured,
    Spent,
    TimedOut,
    Turn,
    verdicts,
)
from engine.adjudication.verdicts import GameEnd, Verdict
from engine.game import Game
from referee.match.clock import TimeControl
from referee.match.ending import announce_end
from referee.match.entry import Unrecorded, move_entry
from referee.match.lastwords import last_words
from referee.match.messages import GameMessages
from referee.match.reconnect import Reconnects
from referee.match.report import (
    GameReport,
    MoveLog,
    Observer,
    Refiner,
    SeatReport,
    new_game_id,
    now_text,
)
from referee.match.seat import (
    EventKind,
    Seat,
    SeatEvent,
    SessionClosed,
    fault_answer,
    move_answer,
)
from referee.match.sendwatch import SendWatch
from referee.match.timing import CpuMeter, MoveTimer
from referee.match.transcript import Transcript
from referee.telemetry import logs as referee_logging
from referee.telemetry.logs import get_logger
from referee.telemetry.metrics import GameMeter

# Names the rest of the referee imports from here.
__all__ = [
    "GameReport",
    "MatchRunner",
    "MoveLog",
    "Observer",
    "Refiner",
    "SeatReport",
    "new_game_id",
]

log = get_logger("referee.match.runner")

#: The kind of seat a runner plays (the gRPC session on a server).
SeatT = TypeVar("SeatT", bound=Seat, covariant=True)

#: A move whose lag (referee time minus the bot's think time) is above this is counted.
LAG_WARN_S = 0.05


class _Ended(Exception):
    def __init__(self, end: GameEnd) -> None:
        self.end = end


class MatchRunner(Generic[SeatT]):
    """Referee one game; :meth:`run` returns its :class:`GameReport`.

    Creating a runner reserves both sessions for its game; :meth:`run` releases them.
    """

    def __init__(
        self,
        game: Game[Any],
        sessions: Sequence[SeatT],
        *,
        time_control: TimeControl | None = None,
        memory_limit_bytes: int = 0,
        game_id: str | None = None,
        labels: Mapping[str, str] | None = None,
        observer: Observer | None = None,
        refine: Refiner | None = None,
        max_strikes: int = 20,
        self_reported_memory: Sequence[bool] = (True, True),
        opening: Sequence[str] = (),
        cpu_meters: Sequence[CpuMeter | None] = (None, None),
        seeds: Sequence[int | None] = (None, None),
    ) -> None:
        if len(sessions) != 2 or sessions[0] is sessions[1]:
            raise ValueError("a game needs two different sessions")
        self.game = game
        self.sessions = list(sessions)
        self.timer = MoveTimer(cpu_meters)
        self.game_id = game_id or new_game_id()
        self.observer = observer
        self.refine = refine
        self.adjudicator = Adjudicator(
            game,
            control=time_control,
            memory_limit_bytes=memory_limit_bytes,
            judged_memory=self_reported_memory,
            max_strikes=max_strikes,
            cpu_measured=self.timer.cpu.measured,
        )
        self.control = self.adjudicator.control  # a remote seat makes a CPU clock a wall one
        self.seat_names = self.adjudicator.seat_names
        self.clocks = self.adjudicator.clocks
        self.state = self.adjudicator.state
        self.inbox: asyncio.Queue[SeatEvent] = asyncio.Queue()
        self._abort_reason: str | None = None
        self.overheads: list[float] | None = None  # benchmarks: the referee's time per request
        self._task: asyncio.Task[GameEnd] | None = None
        self._position = self.state.to_string()
        self.report = self._new_report(dict(labels or {}))
        # Every seat is handed a seed (a launched bot's is the one in its TETROMINO_SEED), so
        # that a replay of its side of the game gives it the same one.
        for seat_report, seed in zip(self.report.seats, seeds, strict=True):
            seat_report.seed = secrets.randbelow(2**31) if seed is None else seed
        self.transcript = self.report.transcript = Transcript()
        self.messages = self._messages(memory_limit_bytes)
        self.reconnects = Reconnects(
            self.sessions, self.report.seats, self.transcript, self.game_start, self._bind_seat
        )
        self.away = self.reconnects.windows
        self._play_book(opening)
        # The sessions count as busy from now on (a matchmaker must not pair them again before
        # this runner starts), so a runner that is created must be run.
        for seat, session in enumerate(self.sessions):
            session.attach(self.game_id, seat, self.inbox)

    def _new_report(self, labels: dict[str, str]) -> GameReport:
        return GameReport(
            game_id=self.game_id,
            game=self.game.name,
            params=dict(self.game.params),
            seat_names=self.seat_names,
            seats=[SeatReport(s.name, s.version) for s in self.sessions],
            time_control=self.control,
            memory_limit_bytes=self.adjudicator.memory_limit,
            initial_position=self._position,
            started_at=now_text(),
            labels=labels,
        )

    def _messages(self, memory_limit_bytes: int) -> GameMessages:
        """The game's protocol messages, as every seat is told them."""
        players = [(s.name, s.version) for s in self.sessions]
        return GameMessages(
            self.game_id,
            self.game,
            players=players,
            control=self.control,
            memory_limit_bytes=memory_limit_bytes,
            initial_position=self._position,
            labels=self.report.labels,
            seeds=[seat.seed or 0 for seat in self.report.seats],
        )

    def _play_book(self, opening: Sequence[str]) -> None:
        """Play an opening's moves for both seats, off the clocks: the bots get them with
        GameStart (as moves already played), so they see an ordinary game that began so."""
        for played in self.adjudicator.play_book(opening):
            entry = MoveLog(played.ply, played.seat, played.text, 0.0, 0.0, 0, None, "", True)
            self.report.moves.append(entry)
        self._position = self.state.to_string()

    @property
    def memory_limit(self) -> int:
        return self.adjudicator.memory_limit

    @property
    def position(self) -> str:
        """The position as the bots last saw it (the game's text form)."""
        return self._position

    # -- the game --------------------------------------------------------------------------------

    def inject(self, seat: int, kind: EventKind, detail: str) -> None:
        """Report something about a seat from outside its stream (e.g. its process died or
        broke its memory limit); the game ends with the matching verdict."""
        self.inbox.put_nowait(SeatEvent(seat, kind, time.monotonic(), detail=detail))

    def abort(self, reason: str) -> None:
        """Stop the game now: it ends as aborted (no result, never a loss)."""
        if self._abort_reason is None:
            self._abort_reason = reason
        if self._task is not None:
            self._task.cancel()

    async def run(self) -> GameReport:
        """Play the game to its end and announce the result to both bots."""
        meter = GameMeter(self.game.name)
        with structlog.contextvars.bound_contextvars(game_id=self.game_id, seat=None, ply=None):
            self.timer.start()
            try:
                self._task = asyncio.create_task(self._play(meter))
                if self._abort_reason is not None:
                    self._task.cancel()
                try:
                    end = await self._task
                except asyncio.CancelledError:
                    task = asyncio.current_task()
                    stopped = self._abort_reason is None or (task is not None and task.cancelling())
                    why = "the referee stopped the game" if stopped else self._abort_reason
                    # A game the adjudicator had already ended keeps its result.
                    end = self.adjudicator.end or verdicts.aborted(why or "")
                    if stopped:
                        self._task.cancel()
                        await asyncio.shield(self._finish(end))
                        raise
                except Exception:
                    self.bind_log(self.state.to_move, self.state.ply)
                    log.exception("referee_failure")
                    end = verdicts.aborted("the referee failed (internal error)")
                await self._finish(end)
            finally:
                end_now = self.report.end
                meter.finished(end_now.verdict if end_now is not None else Verdict.ABORTED)
                self.timer.stop()
                for session in self.sessions:
                    session.detach(self.game_id)
        return self.report

    async def _play(self, meter: GameMeter) -> GameEnd:
        # A seat learns of accepted moves from its next request (the newest as ``last_move``,
        # its own from its answer) or from GameOver; no message of its own is sent per move:
        # an awaited gRPC write is slow to complete, and it would wake the bot that is not
        # thinking while the other one is.
        last: Accepted | None = None
        received: float | None = None
        # An accepted move is written into the report (shown to the observer, counted in the
        # metrics) once the next request is written: between a move's arrival and the next
        # request the referee does only what that request needs (judgement, clocks, position).
        unrecorded: Unrecorded | None = None
        try:
            if (gone := await self.reconnects.announce()) is not None:
                await self._decide(gone[0], Disconnected(gone[1]))
            # CPU is charged from here: the making of a course Agent is, start-up is not.
            self.timer.cpu.mark_all()
            while True:
                turn = self.adjudicator.turn()
                if isinstance(turn, GameEnd):
                    return turn
                # Seat and ply are bound only when something is logged (see _bind): binding on
                # every ply costs more than the rest of the referee's bookkeeping.
                limit = turn.allowance.limit
                request = self.messages.move_request(
                    turn.ply, self._position, self.clocks, limit, last
                )
                self.reconnects.pending = (turn.seat, request)
                sent = await self._send_request(turn, request)
                overhead = None if received is None else sent - received
                if unrecorded is not None:
                    self._record(unrecorded)
                    meter.move(overhead)
                    unrecorded = None
                if self.overheads is not None and overhead is not None:
                    self.overheads.append(overhead)
                event = await self._await_move(turn, sent)
                received = event.received
                last, unrecorded = await self._judge(turn, event, sent)
        except _Ended as ended:
            return ended.end
        finally:
            if unrecorded is not None:  # the game ended before the next request went out
                self._record(unrecorded)
                meter.move(None)

    async def _send_request(self, turn: Turn, request: bytes) -> float:
        """Send the mover its request; returns the moment its clock starts."""
        session = self.sessions[turn.seat]
        started = time.monotonic()
        if self.away.is_away(turn.seat):
            # Its clock runs from now; the request goes out when it is back.
            return started
        self.transcript.sent(turn.seat, request)
        # A bot that stops reading its stream eventually blocks writes to it (flow control);
        # the request then counts against its clock like its answer does. The write is awaited
        # in this task (a task of its own would cost an event-loop turn per move); a watch
        # looks at the clock whenever the move may have run out, and only a blown clock ends
        # the write. A watch that runs late (the referee itself was stopped) is only a
        # wake-up: the clock decides.
        task = asyncio.current_task()
        assert task is not None
        watch = SendWatch(task, lambda: self.timer.spent(turn.seat, started, time.monotonic()))
        spent = watch.spent()
        if turn.allowance.blown(spent) is not None:
            await self._decide(turn.seat, TimedOut(spent.wall, spent.cpu))
        watch.arm(turn.allowance, spent)
        try:
            return await session.send_bytes(request)
        except asyncio.CancelledError:
            if watch.blown is None or task.uncancel() > 0:
                raise  # cancelled by someone else: the game is being stopped
            await self._decide(turn.seat, TimedOut(watch.blown.wall, watch.blown.cpu))
            raise  # not reached: a time-out ends the game
        except SessionClosed as exc:
            return await self._send_failed(turn.seat, session, exc)
        finally:
            watch.stop()

    async def _send_failed(self, seat: int, session: Seat, exc: SessionClosed) -> float:
        """The request could not be written: the seat is away (or, not resumable, gone)."""
        sent = time.monotonic()
        if not session.resumable:
            await self._decide(seat, Disconnected(str(exc)))
        self.reconnects.away(seat, sent, str(exc))
        return sent

    async def _await_move(self, turn: Turn, sent: float) -> SeatEvent:
        """The mover's answer; every other seat's event is dealt with on the way."""
        inbox = self.inbox
        loop = asyncio.get_running_loop()
        cpu: float | None = None  # read only when a wait ends: the answer is judged on its own
        while True:
            # The earliest of the mover's deadline and any away seat's reconnect window.
            now = time.monotonic()
            wait = turn.allowance.wake_in(Spent(self.timer.wall(sent, now), cpu))
            until = None if wait is None else now + wait
            window = self.away.earliest()
            if window is not None:
                until = window if until is None else min(until, window)
            try:
                if until is None:
                    event = await inbox.get()
                else:
                    async with asyncio.timeout_at(loop.time() + (until - time.monotonic())):
                        event = await inbox.get()
            except TimeoutError:
                # The runner may have been scheduled late: an answer stamped in time counts.
                if inbox.empty():
                    cpu = (await self._deadline_passed(turn, sent)).cpu
                    continue
                event = inbox.get_nowait()
            if event.kind is EventKind.MOVE:
                assert event.move is not None
                self.transcript.answered(event.seat, event.move, event.received)
                if event.seat == turn.seat and event.move.ply == turn.ply:
                    return event
                await self._stray(event.seat, event.move.ply, turn)
            elif moved := await last_words(self.inbox, self.sessions, turn, event):
                return moved  # sent just before its process ended: judged before the exit
            else:
                await self._seat_event(event)

    async def _deadline_passed(self, turn: Turn, sent: float) -> Spent:
        """Woken with nothing to read: end the game if a window or the deadline has passed;
        else what the move has taken so far."""
        now = time.monotonic()
        seat = self.away.closed(now, turn.seat)
        if seat is not None:
            window = self.away.length[seat]
            await self._decide(seat, Disconnected(self.away.why[seat], window))
        spent = self.timer.spent(turn.seat, sent, now)
        if turn.allowance.blown(spent) is not None:
            await self._decide(turn.seat, TimedOut(spent.wall, spent.cpu))
        return spent

    async def _seat_event(self, event: SeatEvent) -> None:
        """Anything but a move from a seat: a drop, a comeback, or a fault that ends the game."""
        seat = event.seat
        kind = event.kind
        self.transcript.happened(seat, kind.value, event.detail, event.received)
        if kind is EventKind.DISCONNECT and not self.sessions[seat].closed.is_set():
            # A drop the session may come back from (or already has: RESUMED follows).
            if self.sessions[seat].suspended and not self.away.is_away(seat):
                self.reconnects.away(seat, event.received, event.detail)
            return
        if kind is EventKind.RESUMED:
            await self.reconnects.back(seat)
            return
        answer = fault_answer(kind, event.detail)
        if answer is None and self.away.is_away(seat):
            answer = Disconnected(self.away.why[seat], self.away.length[seat])
        await self._decide(seat, answer or Disconnected(event.detail))

    async def _stray(self, seat: int, ply: int, turn: Turn) -> None:
        """A move that is not the awaited one: refused, and punished when it goes on."""
        decision = self.adjudicator.stray(seat, ply)
        if isinstance(decision, GameEnd):
            raise _Ended(await self._refined(decision))
        code = pb.ERROR_CODE_WRONG_PLY if seat == turn.seat else pb.ERROR_CODE_NOT_YOUR_TURN
        await self.sessions[seat].error(code, decision.message, game_id=self.game_id)

    async def _judge(
        self, turn: Turn, event: SeatEvent, sent: float
    ) -> tuple[Accepted, Unrecorded]:
        """Hand the mover's answer to the adjudicator; returns the move to announce, and the
        move as :meth:`_record` writes it."""
        move = event.move
        assert move is not None
        spent = self.timer.spent(turn.seat, sent, event.received, answered=True)
        stall = max(0.0, event.received - sent) - spent.wall
        seat_report = self.report.seats[turn.seat]  # a peak that ends the game counts too
        seat_report.peak_rss_bytes = max(seat_report.peak_rss_bytes, move.peak_rss_bytes)
        accepted = await self._decide(turn.seat, move_answer(move, spent))
        self._position = self.state.to_string()
        return accepted, Unrecorded(accepted, move, stall)

    def _record(self, unrecorded: Unrecorded) -> None:
        """Write an accepted move into the report, and show it to the observer."""
        entry = move_entry(unrecorded, self.report.moves, self.game_id)
        self.report.moves.append(entry)
        if entry.lag_s > LAG_WARN_S:
            self.report.slow_lag_moves += 1
        if referee_logging.debug_enabled():
            self.bind_log(entry.seat, entry.ply)
            log.debug("move", action=entry.action, time_s=round(entry.time_s, 6))
        if self.observer is not None:
            self.observer.on_move(self.state, entry, self.clocks)

    async def _decide(self, seat: int, answer: Answer) -> Accepted:
        """The adjudicator's decision; a game end leaves the game loop (``_Ended``)."""
        decision = self.adjudicator.judge(seat, answer)
        if isinstance(decision, Accepted):
            return decision
        if not isinstance(answer, Measured):
            decision = await self._refined(decision)
        raise _Ended(decision)

    async def _refined(self, end: GameEnd) -> GameEnd:
        return end if self.refine is None else await self.refine(end)

    # -- the seats' messages and log context ------------------------------------------------

    def game_start(self, seat: int) -> bytes:
        """GameStart for ``seat``, with the moves played so far (book moves, or a resume's)."""
        moves = self.adjudicator.moves
        return self.messages.game_start(seat, moves, self._position if moves else "")

    def bind_log(self, seat: int | None, ply: int | None) -> None:
        """Name the seat and ply in what is logged from here on."""
        structlog.contextvars.bind_contextvars(
            seat=None if seat is None else self.seat_names[seat], ply=ply
        )

    def _bind_seat(self, seat: int) -> None:
        self.bind_log(seat, self.state.ply)

    # -- the end -------------------------------------------------------------------------------

    async def _finish(self, end: GameEnd) -> None:
        report = self.report
        report.settle(end, self.position, self.clocks, self.control, self.timer.stalled())
        moves = self.adjudicator.moves
        game_over = self.messages.game_over(
            end,
            plies=report.plies,
            final_position=report.final_position,
            clocks=self.clocks,
            last_action=moves[-1] if moves else "",
        )
        ply = self.state.ply
        await announce_end(
            end, report, game_over, ply=ply, sessions=self.sessions, transcript=self.transcript
        )
        if self.observer is not None:
            self.observer.on_end(self.state, report)
