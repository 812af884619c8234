"""One lesson put to a bot: a fresh bot process is brought to the lesson's position and asked
for one move under the game's limits (the other end of :mod:`client_sdk._child`, as in
``python -m client_sdk play``).

The bot hears the game as it would have in play: the start, then every move of the lesson's
history as an accepted move (so a course bot that keeps its own board follows too); a lesson
without a history (a position someone added) starts the bot from the position itself. Its
time is the mover's clock at that ply when the lesson knows it, else the file's game time,
capped by the move time; its memory the file's limit. Nothing is sandboxed here; the referee
runs uploaded bots through the same function with a sandbox's command line (``command``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from client_sdk._agent import Clocks, GameInfo
from client_sdk._procbot import BotCommand, BotStartError, ProcessBot
from engine.adjudication import BotFailed, Measured, MoveAnswer, NotAMove, TimedOut
from engine.adjudication.clock import DEFAULT_GRACE_S
from engine.adjudication.verdicts import Verdict
from engine.errors import EngineError
from engine.records.lessons import Lesson, Limits, lesson_state, solves
from engine.registry import load_game

_MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Tried:
    """What the bot did with one lesson.

    ``result``: ``solved`` (one of the good moves), ``missed`` (another legal move),
    ``repeated`` (the very move the lesson is about), ``illegal``, ``time``, ``memory``,
    ``crash`` or ``no_start`` (the bot could not be loaded).
    """

    result: str
    move: str | None
    seconds: float
    detail: str = ""

    @property
    def solved(self) -> bool:
        return self.result == "solved"


def allowance(lesson: Lesson, limits: Limits) -> float | None:
    """The seconds the bot may think on this position (``None``: no limit)."""
    budget = lesson.clock_s if lesson.clock_s is not None else limits.game_time_s or None
    if limits.move_time_s:
        budget = limits.move_time_s if budget is None else min(budget, limits.move_time_s)
    return budget


def try_lesson(
    bot: str,
    lesson: Lesson,
    limits: Limits,
    *,
    echo: bool = False,
    command: BotCommand | None = None,
    on_start: Callable[[Callable[[], None]], None] | None = None,
) -> Tried:
    """Start ``bot`` afresh, bring it to ``lesson``'s position, ask for one move, judge it.

    ``command``: how to start the bot's process (default: ``python -m client_sdk._child BOT``
    here); ``on_start`` is handed a function that kills it (another thread may end a run)."""
    began = time.perf_counter()
    rules = load_game(lesson.game, **dict(lesson.params))
    state = lesson_state(lesson)
    seat_name = rules.seat_names[lesson.seat]
    try:
        process = ProcessBot(bot, label=seat_name, echo=echo, command=command, on_start=on_start)
    except BotStartError as exc:
        return Tried("no_start", None, time.perf_counter() - began, str(exc))
    try:
        _bring(process, rules, lesson, limits)
        budget = allowance(lesson, limits)
        clocks = Clocks(time_left=budget, move_limit=limits.move_time_s or None)
        deadline = None if budget is None else budget + DEFAULT_GRACE_S
        memory = int(limits.memory_mb * _MB)
        answer = process.request(seat_name, clocks, lesson.position, deadline, memory)
    finally:
        process.kill()
        process.close()
    return _judged(state, lesson, answer, time.perf_counter() - began)


def _bring(process: ProcessBot, rules: Any, lesson: Lesson, limits: Limits) -> None:
    """Start the game and tell the bot every move of the lesson's history."""
    start = rules.new_state() if lesson.history else rules.state_from_string(lesson.position)
    info = GameInfo(
        game_id=lesson.game_id or "lesson",
        game=lesson.game,
        seat=lesson.seat,
        seat_names=rules.seat_names,
        params=dict(lesson.params),
        time_per_game=limits.game_time_s or None,
        move_time=limits.move_time_s or None,
        memory_limit_mb=limits.memory_mb or None,
        opponent="lesson",
    )
    process.start(info, start.to_string())
    for san in lesson.history:
        mover = start.to_move
        move = start.parse_san(san)
        start.apply(move)
        process.accepted(mover, rules.move_to_text(move))


def _judged(state: Any, lesson: Lesson, answer: object, seconds: float) -> Tried:
    if isinstance(answer, TimedOut):
        return Tried("time", None, seconds, f"no move within {answer.elapsed:.2f} s")
    if isinstance(answer, Measured):
        kind = "memory" if answer.verdict is Verdict.MEMORY else "crash"
        return Tried(kind, None, seconds, answer.sentence)
    if isinstance(answer, BotFailed):
        last = answer.detail.strip().splitlines()[-1:] or ["it raised"]
        return Tried("crash", None, seconds, last[0])
    if isinstance(answer, NotAMove):
        return Tried("illegal", None, seconds, f"not a move: {answer.returned}")
    assert isinstance(answer, MoveAnswer)
    try:
        move = state.game.move_from_text(answer.text)
        state.check(move)
        san = state.san(move)
    except (EngineError, ValueError) as exc:
        return Tried("illegal", answer.text, seconds, str(exc))
    if solves(state, lesson, answer.text):
        return Tried("solved", san, seconds)
    if lesson.played is not None and san == state.san(state.parse_san(lesson.played)):
        return Tried("repeated", san, seconds, "the same move as in the game")
    return Tried("missed", san, seconds)
