"""The adjudicator: every decision a referee takes about one game, with no I/O.

It owns the authoritative state and both clocks. Its user (the networked match runner, or the
SDK's in-process ``play_local``) asks whose :meth:`~Adjudicator.turn` it is, measures how long
the bot took, and hands over what the bot answered (an :data:`Answer`); the adjudicator
returns :class:`Accepted` or the :class:`~engine.adjudication.verdicts.GameEnd` with its
verdict and sentence. Because both referees go through this one class, a student's local test
and the real referee cannot disagree about a game.

It never raises because of what a bot did: every bad answer becomes a verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.adjudication import verdicts
from engine.adjudication.clock import Allowance, SeatClock, Spent, TimeControl
from engine.adjudication.verdicts import GameEnd, Verdict
from engine.errors import EngineError, IllegalMoveError, NotationError
from engine.game import Game, State

# -- what a bot answered -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MoveAnswer:
    """A move's text, ``elapsed`` wall seconds after the request, with the bot's own peak
    memory and the ``cpu`` seconds it used since its previous answer (``None``: not measured)."""

    text: str
    elapsed: float
    peak_rss_bytes: int = 0
    cpu: float | None = None


@dataclass(frozen=True, slots=True)
class NotAMove:
    """The bot's code returned something that is not a move (e.g. ``None``)."""

    returned: str
    expected: str
    elapsed: float
    peak_rss_bytes: int = 0
    cpu: float | None = None


@dataclass(frozen=True, slots=True)
class TimedOut:
    """No answer within the deadline; ``elapsed`` wall seconds (and ``cpu`` seconds, where
    measured) had passed when it was noticed."""

    elapsed: float
    cpu: float | None = None


@dataclass(frozen=True, slots=True)
class BotFailed:
    """The bot reported that its own code failed (``detail``: e.g. a traceback)."""

    detail: str


@dataclass(frozen=True, slots=True)
class ProtocolViolation:
    """The bot broke the protocol; ``what`` completes "<seat> ...", e.g. "sent a second Hello"."""

    what: str


@dataclass(frozen=True, slots=True)
class Disconnected:
    """The bot's connection is gone (``window_s``: the reconnect window it let pass)."""

    why: str
    window_s: float | None = None


@dataclass(frozen=True, slots=True)
class Measured:
    """A fault measured outside the bot's messages (a launcher saw its process break its
    memory limit, or die): ``verdict`` with the launcher's ``sentence``."""

    verdict: Verdict
    sentence: str


Answer = MoveAnswer | NotAMove | TimedOut | BotFailed | ProtocolViolation | Disconnected | Measured


# -- what the adjudicator decided ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Turn:
    """Who moves next, at which ply, and the time allowed for it."""

    seat: int
    ply: int
    allowance: Allowance


@dataclass(frozen=True, slots=True)
class Accepted:
    """A legal move, applied: its canonical text and the time it was charged (``elapsed``, on
    the game's clock), with the wall and CPU time measured for it."""

    seat: int
    ply: int
    move: Any
    text: str
    elapsed: float
    clock_after_s: float | None
    wall: float = 0.0
    cpu: float | None = None


@dataclass(frozen=True, slots=True)
class Strike:
    """A stray move (out of turn, or for another ply) that is refused but not yet punished."""

    message: str


class Adjudicator:
    """Judge one game of ``game`` under ``control``, from its start position.

    ``memory_limit_bytes`` (0: none) is judged on a seat's own reports only where
    ``judged_memory[seat]`` is true (a launcher that measures the process judges it instead).
    ``cpu_measured`` says per seat whether its CPU time will be measured: the clocks count CPU
    only when ``control`` asks for it and every seat is measured (else wall time, for both).
    """

    def __init__(
        self,
        game: Game[Any],
        *,
        control: TimeControl | None = None,
        memory_limit_bytes: int = 0,
        judged_memory: Sequence[bool] = (True, True),
        max_strikes: int = 20,
        seat_names: Sequence[str] | None = None,
        cpu_measured: Sequence[bool] = (False, False),
    ) -> None:
        self.game = game
        self.control = (control or TimeControl()).charged(cpu_measured)
        self.memory_limit = memory_limit_bytes
        self.judged_memory = tuple(judged_memory)
        self.max_strikes = max_strikes
        names = tuple(seat_names or game.seat_names)
        self.seat_names: tuple[str, str] = (names[0], names[1])
        self.state: State[Any] = game.new_state()
        self.clocks = (SeatClock(self.control), SeatClock(self.control))
        #: Every accepted move, canonical text, in order.
        self.moves: list[str] = []
        self._turn: Turn | None = None
        self._strikes = [0, 0]
        #: The end of the game, fixed the moment it is decided: nothing said after it (a
        #: stream closing, a late fault) changes it.
        self.end: GameEnd | None = None

    def _ends(self, end: GameEnd) -> GameEnd:
        if self.end is None:
            self.end = end
        return self.end

    def turn(self) -> Turn | GameEnd:
        """The next turn (its clock's allowance is fixed now), or the rules' end of the game."""
        if self.end is not None:
            return self.end
        state = self.state
        # is_over first: asked before every move, it is cheaper than outcome for some games.
        outcome = state.outcome() if state.is_over() else None
        if outcome is not None:
            return self._ends(verdicts.rules_end(outcome, self.seat_names, state.ply))
        seat = state.to_move
        self._turn = Turn(seat, state.ply, self.clocks[seat].allowance())
        return self._turn

    def play_book(self, opening: Sequence[str]) -> list[Accepted]:
        """Play an opening's moves (long form) for both seats before the first turn, off the
        clocks; ``ValueError`` if one is illegal (books are checked when loaded)."""
        played = []
        for text in opening:
            state = self.state
            seat, ply = state.to_move, state.ply
            try:
                move = self.game.move_from_text(text)
                state.apply(move)
            except EngineError as exc:
                raise ValueError(f"opening move {ply + 1} {text!r}: {exc}") from exc
            canonical = self.game.move_to_text(move)
            self.moves.append(canonical)
            played.append(Accepted(seat, ply, move, canonical, 0.0, None))
        return played

    def judge(self, seat: int, answer: Answer) -> Accepted | GameEnd:
        """Decide about ``answer`` from ``seat``: a move for the current turn is checked,
        charged and applied; anything else ends the game with its verdict. Once the game has
        ended, every answer gets that same end."""
        if self.end is not None:
            return self.end
        decision = self._judge(seat, answer)
        return decision if isinstance(decision, Accepted) else self._ends(decision)

    def _judge(self, seat: int, answer: Answer) -> Accepted | GameEnd:
        name = self.seat_names[seat]
        if isinstance(answer, MoveAnswer | NotAMove):
            return self._answer(seat, answer)
        if isinstance(answer, TimedOut):
            return self._timeout(seat, Spent(max(0.0, answer.elapsed), answer.cpu))
        if isinstance(answer, BotFailed):
            sentence = verdicts.bot_failed_sentence(name, answer.detail)
            return verdicts.fault(Verdict.RUNTIME_ERROR, seat, sentence)
        if isinstance(answer, ProtocolViolation):
            return verdicts.fault(Verdict.PROTOCOL_ERROR, seat, f"{name} {answer.what}")
        if isinstance(answer, Disconnected):
            sentence = verdicts.disconnect_sentence(name, answer.why, answer.window_s)
            return verdicts.fault(Verdict.DISCONNECT, seat, sentence)
        return verdicts.fault(answer.verdict, seat, answer.sentence)

    def stray(self, seat: int, ply: int) -> Strike | GameEnd:
        """A move from ``seat`` for ``ply`` that is not the one awaited: refused with a strike,
        until too many of them end the game as a protocol error."""
        if self.end is not None:
            return self.end
        turn = self._turn
        self._strikes[seat] += 1
        if self._strikes[seat] > self.max_strikes:
            what = f"{self.seat_names[seat]} sent too many out-of-turn or stale moves"
            return self._ends(verdicts.fault(Verdict.PROTOCOL_ERROR, seat, what))
        if turn is not None and seat == turn.seat:
            return Strike(f"move for ply {ply} but ply {turn.ply} was requested")
        return Strike(f"it is not your turn (ply {self.state.ply})")

    # -- the mover's answer --------------------------------------------------------------------

    def _answer(self, seat: int, answer: MoveAnswer | NotAMove) -> Accepted | GameEnd:
        turn = self._turn
        if turn is None or turn.seat != seat:
            raise ValueError(f"seat {seat} answered, but it is not its turn")
        name = self.seat_names[seat]
        clock = self.clocks[seat]
        cpu = None if answer.cpu is None else max(0.0, answer.cpu)
        spent = Spent(max(0.0, answer.elapsed), cpu)
        if turn.allowance.blown(spent) is not None:
            return self._timeout(seat, spent)
        elapsed = turn.allowance.charge(spent)
        peak = answer.peak_rss_bytes
        if self.memory_limit and peak > self.memory_limit and self.judged_memory[seat]:
            clock.charge(elapsed, accepted=False, spent=spent)
            sentence = verdicts.memory_sentence(name, peak, self.memory_limit, "self-reported")
            return verdicts.fault(Verdict.MEMORY, seat, sentence)
        if isinstance(answer, NotAMove):
            clock.charge(elapsed, accepted=False, spent=spent)
            sentence = verdicts.not_a_move_sentence(name, answer.returned, answer.expected)
            return verdicts.fault(Verdict.ILLEGAL_MOVE, seat, sentence)
        text = answer.text
        try:
            move = self.game.move_from_text(text)
            self.state.apply(move)
        except IllegalMoveError as exc:
            clock.charge(elapsed, accepted=False, spent=spent)
            sentence = verdicts.illegal_sentence(name, text, exc.detail)
            return verdicts.fault(Verdict.ILLEGAL_MOVE, seat, sentence)
        except (EngineError, ValueError) as exc:
            clock.charge(elapsed, accepted=False, spent=spent)
            detail = exc.message if isinstance(exc, NotationError) else str(exc)
            sentence = verdicts.unreadable_sentence(name, text, detail)
            return verdicts.fault(Verdict.ILLEGAL_MOVE, seat, sentence)
        clock.charge(elapsed, spent=spent)
        canonical = self.game.move_to_text(move)
        self.moves.append(canonical)
        self._turn = None
        return Accepted(
            seat, turn.ply, move, canonical, elapsed, clock.remaining, spent.wall, spent.cpu
        )

    def _timeout(self, seat: int, spent: Spent) -> GameEnd:
        """Out of time: the sentence names the clock that ran out (or the wall backstop)."""
        clock = self.clocks[seat]
        turn = self._turn
        allowance = turn.allowance if turn is not None else clock.allowance()
        name = self.seat_names[seat]
        ply = turn.ply if turn is not None else self.state.ply
        elapsed = allowance.charge(spent)
        limit = allowance.limit
        if allowance.blown(spent) == "backstop" and allowance.backstop is not None:
            assert limit is not None
            sentence = verdicts.backstop_sentence(
                name, spent.wall, allowance.backstop, spent.cpu, limit, verdicts.ply_number(ply)
            )
        elif allowance.per_move:
            assert limit is not None
            sentence = verdicts.time_sentence(
                name, elapsed, limit, verdicts.ply_number(ply), allowance.clock.label
            )
        else:
            total = clock.budget_total
            sentence = verdicts.time_sentence(
                name, clock.used + elapsed, total, None, allowance.clock.label
            )
        clock.charge(elapsed, accepted=False, spent=spent)
        return verdicts.fault(Verdict.TIME, seat, sentence)
