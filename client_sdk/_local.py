"""The in-process referee behind :mod:`client_sdk.testing` (see there)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from client_sdk._agent import Agent, Clocks, GameInfo, GameResult
from client_sdk._driver import GameDriver, MoveReply
from client_sdk._loader import factory_for, load_bot
from engine.adjudication import (
    Adjudicator,
    Answer,
    BotFailed,
    Ending,
    GameEnd,
    MoveAnswer,
    NotAMove,
    TimeControl,
    Turn,
)
from engine.adjudication.clock import DEFAULT_GRACE_S
from engine.adjudication.verdicts import Verdict
from engine.game import Game, State
from engine.outcome import Outcome
from engine.registry import load_game

#: Shortcuts for the example opponents.
BUILTIN_OPPONENTS = {
    "random": "client_sdk.examples.random_bot",
    "greedy": "client_sdk.examples.greedy_bot",
    "course-random": "client_sdk.examples.course_random",
    "course-greedy": "client_sdk.examples.course_greedy",
    "level1": "client_sdk.examples.reference_bot:Level1",
    "level2": "client_sdk.examples.reference_bot:Level2",
    "level3": "client_sdk.examples.reference_bot:Level3",
}

BotLike = Agent | type | Callable[..., Any] | str


@dataclass(frozen=True)
class LocalGame:
    """The result of one local game.

    ``winner`` is a seat index (``None`` for a draw); ``verdict`` a
    :class:`~engine.adjudication.Verdict` (``normal``, ``turn_limit``, ``time``,
    ``illegal_move`` or ``runtime_error`` here); ``termination`` the detail (the rules'
    :class:`~engine.outcome.Termination` for a normal end, else the verdict); ``reason`` the
    sentence the real referee would say; ``moves`` every accepted move in order, in the
    mover's own words;
    ``think_time_s`` the time each seat was charged.
    """

    winner: int | None
    verdict: Verdict
    termination: Ending
    reason: str
    moves: list[str]
    seat_names: tuple[str, str]
    final_state: State[Any]
    think_time_s: tuple[float, float]
    offender: int | None = None
    outcome: Outcome | None = None
    results: tuple[GameResult, GameResult] | None = field(default=None, repr=False)

    @property
    def plies(self) -> int:
        return len(self.moves)

    @property
    def winner_name(self) -> str:
        """``RED``/``BLUE`` (or the game's seat name) of the winner, or ``DRAW``."""
        return "DRAW" if self.winner is None else self.seat_names[self.winner]


def play_local(
    agent: BotLike,
    opponent: BotLike = "random",
    *,
    seat: int = 0,
    game: str = "tetress",
    params: Mapping[str, int] | None = None,
    time_per_game: float | None = 180.0,
    move_time: float | None = None,
    grace: float = DEFAULT_GRACE_S,
    memory_limit_mb: float | None = None,
    game_id: str = "local",
) -> LocalGame:
    """Play ``agent`` in ``seat`` (0 moves first) against ``opponent``; return the result.

    Both may be anything :func:`client_sdk.run` accepts (an agent, an agent class, a course
    ``Agent`` class, a function or a BOT string) or one of ``random``, ``greedy``,
    ``course-random``, ``course-greedy``. The clocks are the referee's: ``time_per_game`` and
    ``move_time`` (``None``: no such limit) with ``grace`` seconds of slack beyond either.
    """
    rules = load_game(game, **dict(params or {}))
    control = TimeControl(
        game_time_s=time_per_game or 0.0, move_time_s=move_time or 0.0, grace_s=grace
    )
    judge = Adjudicator(rules, control=control)
    bots = [opponent, opponent]
    bots[seat] = agent
    drivers = [
        _driver(bot, s, rules, judge.state, game_id, control, memory_limit_mb)
        for s, bot in enumerate(bots)
    ]
    said: list[str] = []
    end = _play(judge, drivers, said)
    return _finish(judge, drivers, end, game_id, said)


def _driver(
    bot: BotLike,
    seat: int,
    rules: Game[Any],
    state: State[Any],
    game_id: str,
    control: TimeControl,
    memory_limit_mb: float | None,
) -> GameDriver:
    info = GameInfo(
        game_id=game_id,
        game=rules.name,
        seat=seat,
        seat_names=rules.seat_names,
        params=dict(rules.params),
        time_per_game=control.game_time_s or None,
        move_time=control.move_time_s or None,
        memory_limit_mb=memory_limit_mb,
    )
    return GameDriver(_factory(bot), info, rules, state.copy())


def _play(judge: Adjudicator, drivers: list[GameDriver], said: list[str]) -> GameEnd:
    """The game loop: every decision is the adjudicator's. ``said`` gets each accepted move
    in the mover's own words (the adjudicator keeps the canonical text). A bot is charged
    the time its driver measured: its choice, and with its first move the making of its agent
    (constructor and ``on_game_start``), as over the network and in the course."""
    while True:
        turn = judge.turn()
        if isinstance(turn, GameEnd):
            return turn
        reply = drivers[turn.seat].request(turn_clocks(judge, turn), judge.state.to_string())
        decision = judge.judge(turn.seat, _answer(reply, reply.think_time_s))
        if isinstance(decision, GameEnd):
            return decision
        assert reply.text is not None
        said.append(reply.text)
        if judge.state.outcome() is None:
            # As the course referee does: every bot hears of every accepted action that does
            # not end the game, seat 0 first, in the mover's own words.
            for driver in drivers:
                driver.accepted(turn.seat, reply.text)


def turn_clocks(judge: Adjudicator, turn: Turn) -> Clocks:
    """The clocks a bot is shown with a move request (also by :mod:`client_sdk._match`)."""
    left = [clock.remaining for clock in judge.clocks]
    return Clocks(
        time_left=left[turn.seat],
        opponent_time_left=left[1 - turn.seat],
        move_limit=turn.allowance.limit,
    )


def _answer(reply: MoveReply, elapsed: float) -> Answer:
    if reply.error is not None:
        return BotFailed(reply.error)
    if reply.text is None:
        return NotAMove(reply.not_a_move or "None", reply.expected, elapsed)
    return MoveAnswer(reply.text, elapsed)


def _finish(
    judge: Adjudicator, drivers: list[GameDriver], end: GameEnd, game_id: str, moves: list[str]
) -> LocalGame:
    names = judge.seat_names
    results = tuple(
        GameResult(
            game_id, s, end.winner, end.verdict, end.termination, end.reason, len(moves), names
        )
        for s in (0, 1)
    )
    state = judge.state
    for s, driver in enumerate(drivers):
        driver.finish(results[s], state.to_string())
    return LocalGame(
        end.winner,
        end.verdict,
        end.termination,
        end.reason,
        moves,
        names,
        state,
        (judge.clocks[0].used, judge.clocks[1].used),
        end.offender,
        state.outcome(),
        (results[0], results[1]),
    )


def _factory(bot: BotLike) -> Callable[[], Agent]:
    if isinstance(bot, str):
        return load_bot(BUILTIN_OPPONENTS.get(bot, bot))
    return factory_for(bot)
