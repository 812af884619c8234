"""The match runner: the I/O around one game's :class:`~engine.adjudication.Adjudicator`.

The adjudicator decides (whose turn, what a move costs, whether it is legal, which verdict and
sentence end the game); the runner talks to the two bot sessions: it sends the mover its
request, waits on the game's queue (fed by the sessions' reader tasks) until the seat's
deadline, hands the answer (or the timeout, the crash, the drop ...) to the adjudicator, and
announces the end. It never raises because of what a bot did.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from typing import Any

import structlog

from client_sdk.proto import referee_pb2 as pb
from engine.adjudication import (
    Accepted,
    Adjudicator,
    Answer,
    BotFailed,
    Disconnected,
    Measured,
    MoveAnswer,
    NotAMove,
    ProtocolViolation,
    TimedOut,
    Turn,
)
from engine.game import Game
from referee.match import verdicts
from referee.match.clock import TimeControl
from referee.match.messages import GameMessages
from referee.match.reconnect import AwayWindows
from referee.match.report import (
    GameReport,
    MoveLog,
    Observer,
    Refiner,
    SeatReport,
    new_game_id,
    now_text,
)
from referee.match.transcript import Transcript
from referee.match.verdicts import GameEnd, Verdict
from referee.server import bounds
from referee.server.session import BotSession, EventKind, SeatEvent, SessionClosed
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

#: How much of a bot's comment is kept.
MAX_TEXT = bounds.MAX_COMMENT_CHARS
#: How long a message outside the clocks (game start, game over) may take to be written.
SEND_TIMEOUT = 10.0
#: A move whose lag (referee time minus the bot's think time) is above this is counted.
LAG_WARN_S = 0.05


class _Ended(Exception):
    def __init__(self, end: GameEnd) -> None:
        self.end = end


class MatchRunner:
    """Referee one game; :meth:`run` returns its :class:`GameReport`.

    Creating a runner reserves both sessions for its game; :meth:`run` releases them.
    """

    def __init__(
        self,
        game: Game[Any],
        sessions: Sequence[BotSession],
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
    ) -> None:
        if len(sessions) != 2 or sessions[0] is sessions[1]:
            raise ValueError("a game needs two different sessions")
        self.game = game
        self.sessions = list(sessions)
        self.control = time_control or TimeControl()
        self.game_id = game_id or new_game_id()
        self.observer = observer
        self.refine = refine
        self.adjudicator = Adjudicator(
            game,
            control=self.control,
            memory_limit_bytes=memory_limit_bytes,
            judged_memory=self_reported_memory,
            max_strikes=max_strikes,
        )
        self.seat_names = self.adjudicator.seat_names
        self.clocks = self.adjudicator.clocks
        self.state = self.adjudicator.state
        self.inbox: asyncio.Queue[SeatEvent] = asyncio.Queue()
        self.away = AwayWindows()
        #: The request the mover is waiting on (re-sent when it comes back).
        self._pending: tuple[int, bytes] | None = None
        self._abort_reason: str | None = None
        #: When a list: for every request after the first, the referee's own time from
        #: receiving the previous move to handing this request to the transport (benchmarks).
        self.overheads: list[float] | None = None
        self._task: asyncio.Task[GameEnd] | None = None
        self._position = self.state.to_string()
        self.report = self._new_report(dict(labels or {}))
        self.transcript = self.report.transcript = Transcript()
        self.messages = GameMessages(
            self.game_id,
            game,
            players=[(s.name, s.version) for s in self.sessions],
            control=self.control,
            memory_limit_bytes=memory_limit_bytes,
            initial_position=self._position,
            labels=self.report.labels,
        )
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
            try:
                self._task = asyncio.create_task(self._play(meter))
                if self._abort_reason is not None:
                    self._task.cancel()
                try:
                    end = await self._task
                except asyncio.CancelledError:
                    task = asyncio.current_task()
                    if self._abort_reason is None or (task is not None and task.cancelling()):
                        self._task.cancel()
                        end = verdicts.aborted("the referee stopped the game")
                        await asyncio.shield(self._finish(end))
                        raise
                    end = verdicts.aborted(self._abort_reason)
                except Exception:
                    self._bind(self.state.to_move, self.state.ply)
                    log.exception("referee_failure")
                    end = verdicts.aborted("the referee failed (internal error)")
                await self._finish(end)
            finally:
                end_now = self.report.end
                meter.finished(end_now.verdict if end_now is not None else Verdict.ABORTED)
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
        try:
            await self._announce()
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
                self._pending = (turn.seat, request)
                sent = await self._send_request(turn, request)
                overhead = None if received is None else sent - received
                if self.overheads is not None and overhead is not None:
                    self.overheads.append(overhead)
                event = await self._await_move(turn, sent)
                received = event.received
                last = await self._judge(turn, event, sent)
                meter.move(overhead)
        except _Ended as ended:
            return ended.end

    async def _announce(self) -> None:
        """Both GameStarts go out before the first request, so neither bot learns of the game
        while its opponent's clock already runs for long."""
        for seat, session in enumerate(self.sessions):
            try:
                async with asyncio.timeout(SEND_TIMEOUT):
                    await session.send_bytes(self.transcript.sent(seat, self._game_start(seat)))
            except (SessionClosed, TimeoutError) as exc:
                why = str(exc) or "it does not read its stream"
                if session.resumable:
                    # It may come back within its window: GameStart is sent again then.
                    self._go_away(seat, time.monotonic(), why)
                    continue
                await self._decide(seat, Disconnected(why))

    async def _send_request(self, turn: Turn, request: bytes) -> float:
        """Send the mover its request; returns the moment its clock starts."""
        session = self.sessions[turn.seat]
        if self.away.is_away(turn.seat):
            # Its clock runs from now; the request goes out when it is back.
            return time.monotonic()
        deadline = turn.allowance.deadline
        self.transcript.sent(turn.seat, request)
        try:
            # A bot that stops reading its stream eventually blocks writes to it (flow
            # control); the request then counts against its clock like its answer does.
            async with asyncio.timeout(deadline):
                return await session.send_bytes(request)
        except TimeoutError:
            await self._decide(turn.seat, TimedOut(deadline or 0.0))
        except SessionClosed as exc:
            sent = time.monotonic()
            if not session.resumable:
                await self._decide(turn.seat, Disconnected(str(exc)))
            self._go_away(turn.seat, sent, str(exc))
            return sent
        raise AssertionError("unreachable")

    async def _await_move(self, turn: Turn, sent: float) -> SeatEvent:
        """The mover's answer; every other seat's event is dealt with on the way."""
        deadline = turn.allowance.deadline
        inbox = self.inbox
        loop = asyncio.get_running_loop()
        while True:
            # The earliest of the mover's deadline and any away seat's reconnect window.
            until = None if deadline is None else sent + deadline
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
                    await self._deadline_passed(turn, sent)
                    continue
                event = inbox.get_nowait()
            if event.kind is EventKind.MOVE:
                assert event.move is not None
                self.transcript.answered(event.seat, event.move, event.received)
                if event.seat == turn.seat and event.move.ply == turn.ply:
                    return event
                await self._stray(event.seat, event.move.ply, turn)
            else:
                await self._seat_event(event)

    async def _deadline_passed(self, turn: Turn, sent: float) -> None:
        """Woken with nothing to read: end the game if a window or the deadline has passed."""
        now = time.monotonic()
        seat = self.away.closed(now, turn.seat)
        if seat is not None:
            window = self.away.length[seat]
            await self._decide(seat, Disconnected(self.away.why[seat], window))
        deadline = turn.allowance.deadline
        if deadline is not None and now >= sent + deadline:
            await self._decide(turn.seat, TimedOut(now - sent))

    async def _seat_event(self, event: SeatEvent) -> None:
        """Anything but a move from a seat: a drop, a comeback, or a fault that ends the game."""
        seat = event.seat
        kind = event.kind
        self.transcript.happened(seat, kind.value, event.detail, event.received)
        if kind is EventKind.DISCONNECT and not self.sessions[seat].closed.is_set():
            # A drop the session may come back from (or already has: RESUMED follows).
            if self.sessions[seat].suspended and not self.away.is_away(seat):
                self._go_away(seat, event.received, event.detail)
            return
        if kind is EventKind.RESUMED:
            await self._come_back(seat)
            return
        answer: Answer
        if kind is EventKind.BOT_ERROR:
            answer = BotFailed(event.detail)
        elif kind is EventKind.MALFORMED:
            answer = ProtocolViolation(event.detail)
        elif kind is EventKind.MEMORY:
            answer = Measured(Verdict.MEMORY, event.detail)
        elif kind is EventKind.EXITED:
            answer = Measured(Verdict.RUNTIME_ERROR, event.detail)
        elif self.away.is_away(seat):
            answer = Disconnected(self.away.why[seat], self.away.length[seat])
        else:
            answer = Disconnected(event.detail)
        await self._decide(seat, answer)

    async def _stray(self, seat: int, ply: int, turn: Turn) -> None:
        """A move that is not the awaited one: refused, and punished when it goes on."""
        decision = self.adjudicator.stray(seat, ply)
        if isinstance(decision, GameEnd):
            raise _Ended(await self._refined(decision))
        code = pb.ERROR_CODE_WRONG_PLY if seat == turn.seat else pb.ERROR_CODE_NOT_YOUR_TURN
        await self.sessions[seat].error(code, decision.message, game_id=self.game_id)

    async def _judge(self, turn: Turn, event: SeatEvent, sent: float) -> Accepted:
        """Hand the mover's answer to the adjudicator; returns the move to announce."""
        move = event.move
        assert move is not None
        seat = turn.seat
        elapsed = max(0.0, event.received - sent)
        seat_report = self.report.seats[seat]
        seat_report.peak_rss_bytes = max(seat_report.peak_rss_bytes, move.peak_rss_bytes)
        answer: Answer
        too_long = bounds.action_problem(move.action)
        if too_long is not None:
            answer = ProtocolViolation(too_long)
        elif move.HasField("not_a_move"):
            nam = move.not_a_move
            answer = NotAMove(
                bounds.clean_note(nam.returned),
                bounds.clean_note(nam.expected),
                elapsed,
                move.peak_rss_bytes,
            )
        else:
            answer = MoveAnswer(move.action, elapsed, move.peak_rss_bytes)
        accepted = await self._decide(seat, answer)
        self._position = self.state.to_string()
        entry = MoveLog(
            ply=turn.ply,
            seat=seat,
            action=accepted.text,
            time_s=accepted.elapsed,
            think_time_s=max(0.0, move.think_time_s),
            peak_rss_bytes=move.peak_rss_bytes,
            clock_after_s=accepted.clock_after_s,
            comment=bounds.clean_note(move.comment, MAX_TEXT),
        )
        self.report.moves.append(entry)
        if entry.lag_s > LAG_WARN_S:
            self.report.slow_lag_moves += 1
        if referee_logging.debug_enabled():
            self._bind(seat, turn.ply)
            log.debug("move", action=accepted.text, time_s=round(elapsed, 6))
        if self.observer is not None:
            self.observer.on_move(self.state, entry, self.clocks)
        return accepted

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

    # -- drops and comebacks ------------------------------------------------------------------

    def _go_away(self, seat: int, when: float, why: str) -> None:
        window = self.sessions[seat].resume_window
        self.away.leave(seat, when, window, why)
        self._bind(seat, self.state.ply)
        log.info("seat_away", reason=why, window_s=window)

    async def _come_back(self, seat: int) -> None:
        """The seat's session is back: give it the game again, and the pending request."""
        session = self.sessions[seat]
        if not self.away.back(seat) and not session.resumes:
            return
        self.report.seats[seat].reconnects += 1
        self._bind(seat, self.state.ply)
        log.info("seat_back")
        messages = [self._game_start(seat)]
        if self._pending is not None and self._pending[0] == seat:
            messages.append(self._pending[1])
        try:
            async with asyncio.timeout(SEND_TIMEOUT):
                for data in messages:
                    await session.send_bytes(self.transcript.sent(seat, data))
        except (SessionClosed, TimeoutError):
            # Dropped again: its DISCONNECT event follows (or its window still runs).
            if session.resumable and not self.away.is_away(seat):
                self._go_away(seat, time.monotonic(), "it dropped again while resuming")

    def _game_start(self, seat: int) -> bytes:
        """GameStart for ``seat``, with the moves played so far (book moves, or a resume's)."""
        moves = self.adjudicator.moves
        return self.messages.game_start(seat, moves, self._position if moves else "")

    def _bind(self, seat: int | None, ply: int | None) -> None:
        structlog.contextvars.bind_contextvars(
            seat=None if seat is None else self.seat_names[seat], ply=ply
        )

    # -- the end -------------------------------------------------------------------------------

    async def _finish(self, end: GameEnd) -> None:
        report = self.report
        report.end = end
        report.final_position = self._position
        report.finished_at = now_text()
        for seat, (seat_report, clock) in enumerate(zip(report.seats, self.clocks, strict=True)):
            seat_report.time_used_s = clock.used
            seat_report.remaining_s = clock.remaining
            seat_report.moves = sum(1 for m in report.moves if m.seat == seat and not m.book)
        structlog.contextvars.bind_contextvars(seat=None, ply=self.state.ply)
        log.info(
            "game_over",
            players=" vs ".join(seat.name for seat in report.seats),
            result=end.result(),
            verdict=str(end.verdict),
            termination=str(end.termination),
            reason=end.reason,
            plies=report.plies,
        )
        moves = self.adjudicator.moves
        message = self.messages.game_over(
            end,
            plies=report.plies,
            final_position=report.final_position,
            clocks=self.clocks,
            last_action=moves[-1] if moves else "",
        )

        async def tell(seat: int, session: BotSession) -> None:
            self.transcript.sent(seat, message)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(SEND_TIMEOUT):
                    await session.send_quietly(message)

        await asyncio.gather(*(tell(seat, s) for seat, s in enumerate(self.sessions)))
        if self.observer is not None:
            self.observer.on_end(self.state, report)
