"""A local referee for bot authors: play your bot against an opponent in this process, with
no network and no server, and get the result and every move back.

    from client_sdk.testing import play_local
    game = play_local(MyBot(), "greedy")
    print(game.winner_name, game.reason, len(game.moves))

Both bots go through the same code as over the network (including the course adapter), so a
bot that behaves here behaves against the real referee. Differences: the referee here cannot
interrupt a bot that is still thinking (it charges the time afterwards, and a bot over its
time loses once it answers), and the clocks contain no network latency.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from client_sdk.agent import Agent, Clocks, GameInfo, GameResult
from client_sdk.driver import GameDriver
from client_sdk.loader import factory_for, load_bot
from engine.errors import EngineError, IllegalMoveError
from engine.game import State
from engine.outcome import Outcome, Termination
from engine.registry import load_game

#: Shortcuts for the example opponents.
BUILTIN_OPPONENTS = {
    "random": "client_sdk.examples.random_bot",
    "greedy": "client_sdk.examples.greedy_bot",
    "course-random": "client_sdk.examples.course_random",
    "course-greedy": "client_sdk.examples.course_greedy",
}

BotLike = Agent | type | Callable[..., Any] | str


@dataclass(frozen=True)
class LocalGame:
    """The result of one local game.

    ``winner`` is a seat index (``None`` for a draw); ``verdict`` is ``normal``,
    ``turn_limit``, ``time``, ``illegal_move`` or ``runtime_error``; ``termination`` the
    detail (the rules' termination for a normal end); ``moves`` the text of every accepted
    move in order; ``think_time_s`` the wall time each seat used.
    """

    winner: int | None
    verdict: str
    termination: str
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
    memory_limit_mb: float | None = None,
    game_id: str = "local",
) -> LocalGame:
    """Play ``agent`` in ``seat`` (0 moves first) against ``opponent``; return the result.

    Both may be anything :func:`client_sdk.run` accepts (an agent, an agent class, a course
    ``Agent`` class, a function or a BOT string) or one of ``random``, ``greedy``,
    ``course-random``, ``course-greedy``.
    """
    rules = load_game(game, **dict(params or {}))
    bots = [opponent, opponent]
    bots[seat] = agent
    bots[1 - seat] = opponent
    state = rules.new_state()
    names = rules.seat_names
    drivers = []
    for s, bot in enumerate(bots):
        info = GameInfo(
            game_id=game_id,
            game=rules.name,
            seat=s,
            seat_names=names,
            params=dict(rules.params),
            time_per_game=time_per_game,
            move_time=move_time,
            memory_limit_mb=memory_limit_mb,
        )
        drivers.append(GameDriver(_factory(bot)(), info, rules, state.copy()))

    time_left: list[float | None] = [time_per_game, time_per_game]
    used = [0.0, 0.0]
    moves: list[str] = []

    def end(
        winner: int | None,
        verdict: str,
        termination: str,
        reason: str,
        offender: int | None = None,
        outcome: Outcome | None = None,
    ) -> LocalGame:
        results = tuple(
            GameResult(game_id, s, winner, verdict, termination, reason, len(moves), names)
            for s in (0, 1)
        )
        for s, driver in enumerate(drivers):
            driver.finish(results[s], state.to_string())
        return LocalGame(
            winner,
            verdict,
            termination,
            reason,
            moves,
            names,
            state,
            (used[0], used[1]),
            offender,
            outcome,
            (results[0], results[1]),
        )

    for s, driver in enumerate(drivers):
        error = driver.start()
        if error is not None:
            return end(1 - s, "runtime_error", "runtime_error", _crash(names[s], error), s)

    while True:
        outcome = state.outcome()
        if outcome is not None:
            verdict = "turn_limit" if outcome.termination is Termination.TURN_LIMIT else "normal"
            return end(
                outcome.winner,
                verdict,
                outcome.termination.value,
                _rules_reason(outcome, names),
                None,
                outcome,
            )
        mover = state.to_move
        who = names[mover]
        left = time_left[mover]
        limits = [x for x in (move_time, left) if x is not None]
        clocks = Clocks(
            time_left=left,
            opponent_time_left=time_left[1 - mover],
            move_limit=min(limits) if limits else None,
        )
        started = time.perf_counter()
        reply = drivers[mover].request(clocks, state.to_string())
        elapsed = time.perf_counter() - started
        used[mover] += elapsed
        if left is not None:
            time_left[mover] = left - elapsed
        if reply.error is not None:
            return end(1 - mover, "runtime_error", "runtime_error", _crash(who, reply.error), mover)
        if move_time is not None and elapsed > move_time:
            reason = f"{who} exceeded its move time: used {elapsed:.2f} s of {move_time:.2f} s"
            return end(1 - mover, "time", "time", reason, mover)
        if left is not None and elapsed > left:
            reason = f"{who} exceeded its time: used {used[mover]:.2f} s of {time_per_game:.2f} s"
            return end(1 - mover, "time", "time", reason, mover)
        if reply.text is None:
            expected = f"a {reply.expected}" if reply.expected else "a move"
            reason = f"{who} returned {reply.not_a_move}, which is not {expected}"
            return end(1 - mover, "illegal_move", "illegal_move", reason, mover)
        try:
            move = rules.move_from_text(reply.text)
            state.apply(move)
        except IllegalMoveError as exc:
            reason = f"{who} played an illegal move {reply.text}: {exc.detail}"
            return end(1 - mover, "illegal_move", "illegal_move", reason, mover)
        except EngineError as exc:
            reason = f"{who} sent a move that cannot be read, {reply.text!r}: {exc}"
            return end(1 - mover, "illegal_move", "illegal_move", reason, mover)
        moves.append(reply.text)
        if state.outcome() is None:
            # As the course referee does: every bot hears of every accepted action that does
            # not end the game, seat 0 first, in the mover's own words.
            for driver in drivers:
                driver.accepted(mover, reply.text)


def _factory(bot: BotLike) -> Callable[[], Agent]:
    if isinstance(bot, str):
        return load_bot(BUILTIN_OPPONENTS.get(bot, bot))
    return factory_for(bot)


def _crash(who: str, error: str) -> str:
    last = error.strip().splitlines()[-1] if error.strip() else "an exception"
    return f"{who} raised an exception: {last}"


def _rules_reason(outcome: Outcome, names: tuple[str, str]) -> str:
    if outcome.termination is Termination.TURN_LIMIT:
        if outcome.winner is None:
            return "the turn limit was reached with equal token counts: a draw"
        return f"the turn limit was reached and {names[outcome.winner]} has more tokens"
    if outcome.winner is None:
        return f"the game ended in a draw ({outcome.termination.value})"
    loser = names[1 - outcome.winner]
    if outcome.termination is Termination.NO_LEGAL_MOVE:
        return f"{loser} has no legal move; {names[outcome.winner]} wins"
    return f"{names[outcome.winner]} wins ({outcome.termination.value})"
