"""The match runner: one game between two bot sessions, refereed move by move.

The runner owns the authoritative :class:`~engine.game.State`. It asks the seat to move for a
move, waits on the game's queue (fed by the sessions' reader tasks) until the seat's deadline,
validates the answer with the engine, charges the clock and announces the move, until the
rules or a verdict end the game. It never raises because of what a bot did: every bad input
becomes a verdict with a sentence.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

import structlog

from client_sdk.proto import referee_pb2 as pb
from engine.errors import EngineError, IllegalMoveError, NotationError
from engine.game import Game, State
from referee import logging as referee_logging
from referee import verdicts
from referee.clock import Allowance, SeatClock, TimeControl
from referee.logging import get_logger
from referee.session import BotSession, EventKind, SeatEvent, SessionClosed
from referee.verdicts import GameEnd, Verdict
from referee.wire import (
    RequestEncoder,
    clocks_field,
    encode_clock,
    encode_move_played,
    text_field,
)

log = get_logger("referee.match")

#: How much of a bot's comment or error text is kept.
MAX_TEXT = 256
MAX_ERROR_TEXT = 4000
#: How long a message outside the clocks (game start, game over) may take to be written.
SEND_TIMEOUT = 10.0
#: A move whose lag (referee time minus the bot's think time) is above this is counted.
LAG_WARN_S = 0.05


@dataclass(frozen=True, slots=True)
class MoveLog:
    """One accepted move with everything measured about it."""

    ply: int
    seat: int
    action: str
    time_s: float
    think_time_s: float
    peak_rss_bytes: int
    clock_after_s: float | None
    comment: str = ""

    @property
    def lag_s(self) -> float:
        """Referee-measured time minus the bot's own: transport and scheduling."""
        return self.time_s - self.think_time_s


@dataclass(slots=True)
class SeatReport:
    """Per-seat totals of one game."""

    name: str
    version: str
    time_used_s: float = 0.0
    moves: int = 0
    #: The highest peak resident memory the bot reported with its moves.
    peak_rss_bytes: int = 0
    #: The highest resident memory of the bot's process tree as sampled by its launcher
    #: (0: not launched by this referee).
    sampled_rss_bytes: int = 0
    remaining_s: float | None = None
    #: How a launcher measured the sampled figure: ``rss_poll`` or ``cgroup`` (empty: the bot
    #: was not launched here, its own reports are all there is).
    memory_method: str = ""
    #: Every layer that measured and limited a launched bot (e.g. ``rlimit_data+rss_poll``).
    memory_layers: str = ""
    #: How a launched bot's process ended (e.g. ``killed by signal SIGSEGV``); empty if remote.
    exit: str = ""
    #: What a launched bot wrote to stdout/stderr (bounded), kept for its author.
    output: str = ""
    #: Times the bot's session dropped and came back during the game.
    reconnects: int = 0

    @property
    def peak_memory_bytes(self) -> int:
        """The figure the limit is judged on: the launcher's when launched here, else the bot's
        own report."""
        if self.memory_method or self.sampled_rss_bytes:
            return self.sampled_rss_bytes
        return self.peak_rss_bytes

    @property
    def memory_measured_by(self) -> str:
        """How the peak was measured: ``rss_poll``, ``cgroup`` or ``self-reported``."""
        if self.memory_method:
            return self.memory_method
        return "rss_poll" if self.sampled_rss_bytes else "self-reported"


@dataclass(slots=True)
class GameReport:
    """Everything about one finished game: what the record and the result line are made of."""

    game_id: str
    game: str
    params: dict[str, int]
    seat_names: tuple[str, str]
    seats: list[SeatReport]
    time_control: TimeControl
    memory_limit_bytes: int
    initial_position: str
    started_at: str
    labels: dict[str, str] = field(default_factory=dict)
    moves: list[MoveLog] = field(default_factory=list)
    final_position: str = ""
    finished_at: str = ""
    end: GameEnd | None = None
    #: Moves whose lag (referee time minus think time) exceeded ``LAG_WARN_S``; the lag is
    #: charged like the rest of the move, this only counts them.
    slow_lag_moves: int = 0

    @property
    def plies(self) -> int:
        return len(self.moves)

    def summary(self) -> dict[str, Any]:
        """The JSON-ready result (what ``referee match --json`` prints)."""
        end = self.end
        assert end is not None
        mb = 1024 * 1024
        return {
            "game_id": self.game_id,
            "game": self.game,
            "params": self.params,
            "winner": end.winner_name(self.seat_names),
            "winner_seat": end.winner,
            "result": end.result(),
            "verdict": str(end.verdict),
            "termination": end.termination,
            "reason": end.reason,
            "offender": None if end.offender is None else self.seat_names[end.offender],
            "plies": self.plies,
            "seats": {
                name: {
                    "bot": seat.name,
                    "version": seat.version,
                    "time_used_s": round(seat.time_used_s, 6),
                    "time_remaining_s": None
                    if seat.remaining_s is None
                    else round(seat.remaining_s, 6),
                    "moves": seat.moves,
                    "peak_memory_mb": round(seat.peak_memory_bytes / mb, 3),
                    "peak_memory_reported_mb": round(seat.peak_rss_bytes / mb, 3),
                    "peak_memory_sampled_mb": round(seat.sampled_rss_bytes / mb, 3),
                    "memory_measured_by": seat.memory_measured_by,
                    "memory_layers": seat.memory_layers or None,
                    "exit": seat.exit or None,
                    "reconnects": seat.reconnects,
                }
                for name, seat in zip(self.seat_names, self.seats, strict=True)
            },
            "time_control": {
                "game_time_s": self.time_control.game_time_s,
                "move_time_s": self.time_control.move_time_s,
                "increment_s": self.time_control.increment_s,
                "grace_s": self.time_control.grace_s,
            },
            "memory_limit_mb": round(self.memory_limit_bytes / mb, 3),
            "started_at": self.started_at,
            "finished_at": self.finished_at,
        }


class Observer(Protocol):
    """Hooks for displays (``referee match -v``) and live feeds; must not block."""

    def on_move(self, state: State[Any], move: MoveLog, clocks: Sequence[SeatClock]) -> None: ...

    def on_end(self, state: State[Any], report: GameReport) -> None: ...


#: Called before a fault verdict is announced; may refine it (e.g. a disconnect whose process
#: crashed becomes a runtime error with the crash's message).
Refiner = Callable[[GameEnd], Awaitable[GameEnd]]


def new_game_id() -> str:
    return uuid.uuid4().hex[:16]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
    ) -> None:
        if len(sessions) != 2 or sessions[0] is sessions[1]:
            raise ValueError("a game needs two different sessions")
        self.game = game
        self.sessions = list(sessions)
        self.control = time_control or TimeControl()
        self.memory_limit = memory_limit_bytes
        self.game_id = game_id or new_game_id()
        self.observer = observer
        self.refine = refine
        self.max_strikes = max_strikes
        self.seat_names = tuple(game.seat_names)
        self.clocks = [SeatClock(self.control), SeatClock(self.control)]
        self.state: State[Any] = game.new_state()
        self.inbox: asyncio.Queue[SeatEvent] = asyncio.Queue()
        #: Per seat: whether its own memory reports are judged (not when a launcher measures).
        self.self_reported_memory = list(self_reported_memory)
        #: Per seat: while its session is away, the monotonic moment its window closes, and why.
        self._away: list[float | None] = [None, None]
        self._away_why = ["", ""]
        #: The request the mover is waiting on (re-sent when it comes back).
        self._pending: tuple[int, bytes] | None = None
        self._abort_reason: str | None = None
        #: When a list: for every request after the first, the referee's own time from
        #: receiving the previous move to handing this request to the transport (benchmarks).
        self.overheads: list[float] | None = None
        self._task: asyncio.Task[GameEnd] | None = None
        self._strikes = [0, 0]
        self._moves: list[str] = []
        self._tc = pb.TimeControl(
            game_time_s=self.control.game_time_s,
            move_time_s=self.control.move_time_s,
            increment_s=self.control.increment_s,
            grace_s=self.control.grace_s,
        )
        self.report = GameReport(
            game_id=self.game_id,
            game=game.name,
            params=dict(game.params),
            seat_names=(self.seat_names[0], self.seat_names[1]),
            seats=[SeatReport(s.name, s.version) for s in self.sessions],
            time_control=self.control,
            memory_limit_bytes=memory_limit_bytes,
            initial_position=self.state.to_string(),
            started_at=_now(),
            labels=dict(labels or {}),
        )
        players = [pb.Player(name=s.name, version=s.version) for s in self.sessions]
        self._info = [
            pb.GameInfo(
                game=pb.GameSpec(name=game.name, params=dict(game.params)),
                seat=seat,
                seat_names=self.seat_names,
                time_control=self._tc,
                memory_limit_bytes=memory_limit_bytes,
                initial_position=self.report.initial_position,
                players=players,
                labels=self.report.labels,
            )
            for seat in range(2)
        ]
        self._encoders = [RequestEncoder(self.game_id, info) for info in self._info]
        self._name_fields = [text_field(1, name) for name in self.seat_names]
        self._game_id_field = text_field(1, self.game_id)
        self._clock_bytes: bytes | None = None
        self._position = self.report.initial_position
        # The sessions count as busy from now on (a matchmaker must not pair them again before
        # this runner starts), so a runner that is created must be run.
        for seat, session in enumerate(self.sessions):
            session.attach(self.game_id, seat, self.inbox)

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
        with structlog.contextvars.bound_contextvars(game_id=self.game_id, seat=None, ply=None):
            try:
                self._task = asyncio.create_task(self._play())
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
                for session in self.sessions:
                    session.detach(self.game_id)
        return self.report

    async def _play(self) -> GameEnd:
        # Both GameStarts go out before the first request, so neither bot learns of the game
        # while its opponent's clock already runs for long.
        for seat, session in enumerate(self.sessions):
            start = pb.RefereeMessage(
                game_start=pb.GameStart(game_id=self.game_id, info=self._info[seat])
            )
            try:
                async with asyncio.timeout(SEND_TIMEOUT):
                    await session.send(start)
            except (SessionClosed, TimeoutError) as exc:
                why = str(exc) or "it does not read its stream"
                if session.resumable:
                    # It may come back within its window: GameStart is sent again then.
                    self._go_away(seat, time.monotonic(), why)
                    continue
                return await self._fault(
                    Verdict.DISCONNECT, seat, f"{self.seat_names[seat]} disconnected ({why})"
                )
        # A seat learns of accepted moves from its next request (every move so far, the
        # newest also as ``last_move``) or from GameOver; no message of its own is sent per move:
        # an awaited gRPC write is slow to complete, and it would wake the bot that is not
        # thinking while the other one is.
        state = self.state
        last: bytes | None = None
        received: float | None = None
        try:
            while True:
                outcome = state.outcome()
                if outcome is not None:
                    return verdicts.rules_end(outcome, self.seat_names, state.ply)
                seat = state.to_move
                ply = state.ply
                # Seat and ply are bound only when something is logged (see _bind): binding on
                # every ply costs more than the rest of the referee's bookkeeping.
                allowance = self.clocks[seat].allowance()
                session = self.sessions[seat]
                request = self._request(seat, ply, allowance, last)
                self._pending = (seat, request)
                if self._away[seat] is not None:
                    # Its clock runs from now; the request goes out when it is back.
                    sent = time.monotonic()
                else:
                    try:
                        # A bot that stops reading its stream eventually blocks writes to it
                        # (flow control); the request then counts against its clock like its
                        # answer does.
                        async with asyncio.timeout(allowance.deadline):
                            sent = await session.send_bytes(request)
                    except TimeoutError:
                        end = self._timeout(seat, ply, allowance.deadline or 0.0, allowance)
                        raise _Ended(end) from None
                    except SessionClosed as exc:
                        sent = time.monotonic()
                        if not session.resumable:
                            raise _Ended(
                                await self._fault(
                                    Verdict.DISCONNECT,
                                    seat,
                                    f"{self.seat_names[seat]} disconnected ({exc})",
                                )
                            ) from None
                        self._go_away(seat, sent, str(exc))
                if self.overheads is not None and received is not None:
                    self.overheads.append(sent - received)
                event = await self._await_move(seat, ply, sent, allowance)
                received = event.received
                last = await self._judge(seat, ply, event, sent, allowance)
        except _Ended as ended:
            return ended.end

    def _request(self, seat: int, ply: int, allowance: Allowance, last: bytes | None) -> bytes:
        """The encoded move request (``last``: the encoded move to announce with it)."""
        limit = None if allowance.limit is None else max(0.0, allowance.limit)
        clocks = self._clock_bytes
        if clocks is None:
            clocks = clocks_field(self._clock_parts())
        self._clock_bytes = None
        return self._encoders[seat].encode(ply, self._position, clocks, limit, last)

    def _clock_parts(self) -> list[bytes]:
        """Both clocks, encoded (``Clock`` messages), in seat order."""
        return [
            encode_clock(field, clock.remaining, clock.used)
            for field, clock in zip(self._name_fields, self.clocks, strict=True)
        ]

    def _clock_msgs(self) -> list[pb.Clock]:
        out = []
        for name, clock in zip(self.seat_names, self.clocks, strict=True):
            msg = pb.Clock(seat_name=name, used_s=clock.used)
            if clock.remaining is not None:
                msg.remaining_s = clock.remaining
            out.append(msg)
        return out

    async def _await_move(
        self, seat: int, ply: int, sent: float, allowance: Allowance
    ) -> SeatEvent:
        """The mover's answer; every other seat's event is dealt with on the way."""
        deadline = allowance.deadline
        inbox = self.inbox
        loop = asyncio.get_running_loop()
        while True:
            # The earliest of the mover's deadline and any away seat's reconnect window.
            until = None if deadline is None else sent + deadline
            if self._away[0] is not None or self._away[1] is not None:
                away = [t for t in self._away if t is not None]
                until = min(away) if until is None else min(until, *away)
            try:
                if until is None:
                    event = await inbox.get()
                else:
                    async with asyncio.timeout_at(loop.time() + (until - time.monotonic())):
                        event = await inbox.get()
            except TimeoutError:
                # The runner may have been scheduled late: an answer stamped in time counts.
                if inbox.empty():
                    now = time.monotonic()
                    for s in (seat, 1 - seat):
                        gone = self._away[s]
                        if gone is not None and now >= gone:
                            raise _Ended(await self._window_closed(s)) from None
                    if deadline is not None and now >= sent + deadline:
                        end = self._timeout(seat, ply, now - sent, allowance)
                        raise _Ended(end) from None
                    continue
                event = inbox.get_nowait()
            if event.kind is EventKind.DISCONNECT and not self.sessions[event.seat].closed.is_set():
                # A drop the session may come back from (or already has: RESUMED follows).
                if self.sessions[event.seat].suspended and self._away[event.seat] is None:
                    self._go_away(event.seat, event.received, event.detail)
                continue
            if event.kind is EventKind.RESUMED:
                await self._come_back(event.seat)
                continue
            if event.kind is EventKind.MOVE and event.seat == seat:
                assert event.move is not None
                if event.move.ply == ply:
                    return event
                await self._strike(
                    event.seat,
                    pb.ERROR_CODE_WRONG_PLY,
                    f"move for ply {event.move.ply} but ply {ply} was requested",
                )
            elif event.kind is EventKind.MOVE:
                await self._strike(
                    event.seat, pb.ERROR_CODE_NOT_YOUR_TURN, f"it is not your turn (ply {ply})"
                )
            else:
                raise _Ended(await self._event_fault(event))

    async def _judge(
        self, seat: int, ply: int, event: SeatEvent, sent: float, allowance: Allowance
    ) -> bytes:
        """Charge, check and apply the mover's answer; returns the encoded announcement."""
        move = event.move
        assert move is not None
        name = self.seat_names[seat]
        clock = self.clocks[seat]
        elapsed = max(0.0, event.received - sent)
        seat_report = self.report.seats[seat]
        seat_report.peak_rss_bytes = max(seat_report.peak_rss_bytes, move.peak_rss_bytes)
        if clock.over(elapsed, allowance):
            raise _Ended(self._timeout(seat, ply, elapsed, allowance))
        if (
            self.memory_limit
            and move.peak_rss_bytes > self.memory_limit
            and self.self_reported_memory[seat]
        ):
            clock.charge(elapsed, accepted=False)
            raise _Ended(
                await self._fault(
                    Verdict.MEMORY,
                    seat,
                    verdicts.memory_sentence(
                        name, move.peak_rss_bytes, self.memory_limit, "self-reported"
                    ),
                )
            )
        text = move.action
        if move.HasField("not_a_move"):
            clock.charge(elapsed, accepted=False)
            returned = move.not_a_move.returned[:80] or "None"
            expected = move.not_a_move.expected[:80]
            raise _Ended(
                await self._fault(
                    Verdict.ILLEGAL_MOVE,
                    seat,
                    f"{name} returned {returned}, which is not "
                    + (f"a {expected}" if expected else "a move"),
                )
            )
        try:
            parsed = self.game.move_from_text(text)
            self.state.apply(parsed)
        except IllegalMoveError as exc:
            clock.charge(elapsed, accepted=False)
            raise _Ended(
                await self._fault(
                    Verdict.ILLEGAL_MOVE, seat, verdicts.illegal_sentence(name, text, exc.detail)
                )
            ) from None
        except (NotationError, EngineError, ValueError) as exc:
            clock.charge(elapsed, accepted=False)
            shown = text if len(text) <= 80 else text[:77] + "..."
            detail = exc.message if isinstance(exc, NotationError) else str(exc)
            raise _Ended(
                await self._fault(
                    Verdict.ILLEGAL_MOVE,
                    seat,
                    f"{name} sent a move that cannot be read {shown!r}: {detail}",
                )
            ) from None
        clock.charge(elapsed)
        canonical = self.game.move_to_text(parsed)
        self._moves.append(canonical)
        self._position = self.state.to_string()
        for encoder in self._encoders:
            encoder.add_move(canonical)
        entry = MoveLog(
            ply=ply,
            seat=seat,
            action=canonical,
            time_s=elapsed,
            think_time_s=max(0.0, move.think_time_s),
            peak_rss_bytes=move.peak_rss_bytes,
            clock_after_s=clock.remaining,
            comment=move.comment[:MAX_TEXT],
        )
        self.report.moves.append(entry)
        if entry.lag_s > LAG_WARN_S:
            self.report.slow_lag_moves += 1
        if referee_logging.debug_enabled():
            self._bind(seat, ply)
            log.debug("move", action=canonical, time_s=round(elapsed, 6), think_s=move.think_time_s)
        if self.observer is not None:
            self.observer.on_move(self.state, entry, self.clocks)
        clocks = self._clock_parts()
        # The clocks do not change until the next request goes out: encode them once for it.
        self._clock_bytes = clocks_field(clocks)
        return encode_move_played(
            self._game_id_field, ply, seat, canonical, elapsed, self._position, clocks
        )

    # -- drops and comebacks ------------------------------------------------------------------

    def _go_away(self, seat: int, when: float, why: str) -> None:
        window = self.sessions[seat].resume_window
        self._away[seat] = when + window
        self._away_why[seat] = why
        self._bind(seat, self.state.ply)
        log.info("seat_away", reason=why, window_s=window)

    async def _window_closed(self, seat: int) -> GameEnd:
        window = self.sessions[seat].resume_window
        return await self._fault(
            Verdict.DISCONNECT,
            seat,
            f"{self.seat_names[seat]} disconnected ({self._away_why[seat]}) and did not "
            f"reconnect within {window:g} s",
        )

    async def _come_back(self, seat: int) -> None:
        """The seat's session is back: give it the game again, and the pending request."""
        if self._away[seat] is None and not self.sessions[seat].resumes:
            return
        self._away[seat] = None
        self.report.seats[seat].reconnects += 1
        self._bind(seat, self.state.ply)
        log.info("seat_back")
        session = self.sessions[seat]
        start = pb.RefereeMessage(
            game_start=pb.GameStart(game_id=self.game_id, info=self._info[seat])
        )
        messages = [start.SerializeToString()]
        if self._pending is not None and self._pending[0] == seat:
            messages.append(self._pending[1])
        try:
            async with asyncio.timeout(SEND_TIMEOUT):
                for data in messages:
                    await session.send_bytes(data)
        except (SessionClosed, TimeoutError):
            # Dropped again: its DISCONNECT event follows (or its window still runs).
            if session.resumable and self._away[seat] is None:
                self._go_away(seat, time.monotonic(), "it dropped again while resuming")

    def _bind(self, seat: int | None, ply: int | None) -> None:
        structlog.contextvars.bind_contextvars(
            seat=None if seat is None else self.seat_names[seat], ply=ply
        )

    # -- verdicts ----------------------------------------------------------------------------

    def _timeout(self, seat: int, ply: int, elapsed: float, allowance: Allowance) -> GameEnd:
        clock = self.clocks[seat]
        name = self.seat_names[seat]
        if allowance.per_move:
            assert allowance.limit is not None
            sentence = verdicts.time_sentence(name, elapsed, allowance.limit, ply + 1)
        else:
            total = clock.budget_total
            sentence = verdicts.time_sentence(name, clock.used + elapsed, total, None)
        clock.charge(elapsed, accepted=False)
        return verdicts.fault(Verdict.TIME, seat, sentence)

    async def _event_fault(self, event: SeatEvent) -> GameEnd:
        name = self.seat_names[event.seat]
        if event.kind is EventKind.BOT_ERROR:
            detail = event.detail.strip()
            last = detail.splitlines()[-1] if detail else "no details"
            return await self._fault(
                Verdict.RUNTIME_ERROR, event.seat, f"{name}'s bot failed: {last[:MAX_TEXT]}"
            )
        if event.kind is EventKind.MALFORMED:
            return await self._fault(Verdict.PROTOCOL_ERROR, event.seat, f"{name} {event.detail}")
        if event.kind is EventKind.MEMORY:
            return verdicts.fault(Verdict.MEMORY, event.seat, event.detail)
        if event.kind is EventKind.EXITED:
            return verdicts.fault(Verdict.RUNTIME_ERROR, event.seat, event.detail)
        if self._away[event.seat] is not None:
            return await self._window_closed(event.seat)
        return await self._fault(
            Verdict.DISCONNECT, event.seat, f"{name} disconnected ({event.detail})"
        )

    async def _strike(self, seat: int, code: int, message: str) -> None:
        self._strikes[seat] += 1
        if self._strikes[seat] > self.max_strikes:
            raise _Ended(
                await self._fault(
                    Verdict.PROTOCOL_ERROR,
                    seat,
                    f"{self.seat_names[seat]} sent too many out-of-turn or stale moves",
                )
            )
        await self.sessions[seat].error(code, message, game_id=self.game_id)

    async def _fault(self, verdict: Verdict, seat: int, reason: str) -> GameEnd:
        end = verdicts.fault(verdict, seat, reason)
        if self.refine is not None:
            end = await self.refine(end)
        return end

    async def _finish(self, end: GameEnd) -> None:
        report = self.report
        report.end = end
        report.final_position = self._position
        report.finished_at = _now()
        for seat_report, clock in zip(report.seats, self.clocks, strict=True):
            seat_report.time_used_s = clock.used
            seat_report.remaining_s = clock.remaining
        for seat, seat_report in enumerate(report.seats):
            seat_report.moves = sum(1 for m in report.moves if m.seat == seat)
        structlog.contextvars.bind_contextvars(seat=None, ply=self.state.ply)
        log.info(
            "game_over",
            result=end.result(),
            verdict=str(end.verdict),
            termination=end.termination,
            reason=end.reason,
            plies=report.plies,
        )
        over = pb.GameOver(
            game_id=self.game_id,
            result=end.result(),
            winner=end.winner_name(self.seat_names),
            verdict=_VERDICT_TO_PB[end.verdict],
            termination=end.termination,
            reason=end.reason,
            plies=report.plies,
            final_position=report.final_position,
            clocks=self._clock_msgs(),
            last_action=self._moves[-1] if self._moves else "",
        )
        if end.winner is not None:
            over.winner_seat = end.winner
        if end.offender is not None:
            over.offender_seat = end.offender
        message = pb.RefereeMessage(game_over=over)

        async def tell(session: BotSession) -> None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(SEND_TIMEOUT):
                    await session.send_quietly(message)

        await asyncio.gather(*(tell(s) for s in self.sessions))
        if self.observer is not None:
            self.observer.on_end(self.state, report)


_VERDICT_TO_PB: dict[Verdict, pb.Verdict.ValueType] = {
    Verdict.NORMAL: pb.VERDICT_NORMAL,
    Verdict.TURN_LIMIT: pb.VERDICT_TURN_LIMIT,
    Verdict.TIME: pb.VERDICT_TIME,
    Verdict.MEMORY: pb.VERDICT_MEMORY,
    Verdict.ILLEGAL_MOVE: pb.VERDICT_ILLEGAL_MOVE,
    Verdict.RUNTIME_ERROR: pb.VERDICT_RUNTIME_ERROR,
    Verdict.PROTOCOL_ERROR: pb.VERDICT_PROTOCOL_ERROR,
    Verdict.DISCONNECT: pb.VERDICT_DISCONNECT,
    Verdict.ABORTED: pb.VERDICT_ABORTED,
}
