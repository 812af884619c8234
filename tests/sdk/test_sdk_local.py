"""The local test double plays full games through the same driver as the network session,
with the rules' and the referee's verdicts."""

from __future__ import annotations

import time
from typing import Any

import pytest

from client_sdk import Agent, Clocks, GameInfo, GameResult
from client_sdk.examples.greedy_bot import GreedyBot
from client_sdk.examples.random_bot import RandomBot
from client_sdk.testing import play_local
from engine import load_game
from engine.adjudication import Verdict
from engine.game import State


def replay(moves: list[str], game: str = "tetress") -> State[Any]:
    """The position reached by playing ``moves`` from the start."""
    rules = load_game(game)
    state = rules.new_state()
    for text in moves:
        state.apply(rules.move_from_text(text))
    return state


@pytest.mark.parametrize("seat", [0, 1])
def test_random_vs_greedy_full_games(seat: int) -> None:
    """Random and greedy SDK bots play complete games to a rules verdict in either seat."""
    for seed in range(3):
        game = play_local(RandomBot(seed), GreedyBot(seed), seat=seat)
        assert game.verdict in ("normal", "turn_limit")
        assert game.outcome is not None
        assert game.winner == game.outcome.winner
        final = replay(game.moves)
        assert final.outcome() == game.outcome
        assert final.to_string() == game.final_state.to_string()
        assert game.plies == len(game.moves) > 0


def test_greedy_beats_random_mostly() -> None:
    """The greedy one-ply bot wins most games against random (it is an actual opponent)."""
    wins = 0
    for seed in range(10):
        game = play_local(GreedyBot(seed), RandomBot(seed + 100), seat=seed % 2)
        wins += game.winner == seed % 2
    assert wins >= 7


@pytest.mark.slow  # several whole games in this process: seconds
def test_course_bots_play_each_other_and_sdk_bots() -> None:
    """The course-style examples (one searching on the course Board) play full games."""
    game = play_local("course-random", "course-greedy")
    assert game.verdict in ("normal", "turn_limit")
    assert replay(game.moves).outcome() == game.outcome
    game = play_local("course-greedy", "random", seat=1)
    assert game.verdict in ("normal", "turn_limit")


def test_function_agent_and_text_moves() -> None:
    """A plain function returning move text is a bot."""

    def first_legal(state: State[Any], clocks: Clocks) -> str:
        return str(min(state.legal_moves))

    game = play_local(first_legal, "random", seat=1)
    assert game.verdict in ("normal", "turn_limit")
    assert all(text.startswith("PLACE(") for text in game.moves)


def test_att_games_run_through_the_double() -> None:
    """The SDK is not Tetress-only: random and greedy play Asymmetric Tetris Tactics."""
    game = play_local(RandomBot(1), GreedyBot(2), game="att")
    assert game.verdict in ("normal", "turn_limit")
    assert replay(game.moves, "att").outcome() == game.outcome


class Hooks(RandomBot):
    """Records which hooks ran, and scribbles on the states it is given."""

    def __init__(self) -> None:
        super().__init__(5)
        self.events: list[str] = []

    def on_game_start(self, info: GameInfo, state: State[Any]) -> None:
        self.events.append(f"start {info.seat_name} {info.time_per_game}")

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        move = super().choose_move(state, clocks)
        assert clocks.time_left is not None and clocks.time_left <= 180
        state.apply(move)  # the SDK's own copy must not be affected
        return move

    def on_opponent_move(self, move: Any, state: State[Any]) -> None:
        self.events.append("opponent")

    def on_game_end(self, result: GameResult, state: State[Any]) -> None:
        self.events.append(f"end {result.verdict} {result.won}")


def test_hooks_are_called_in_order() -> None:
    """on_game_start once, on_opponent_move per non-final opponent move, on_game_end once."""
    bot = Hooks()
    game = play_local(bot, RandomBot(9), seat=0)
    assert bot.events[0] == "start RED 180.0"
    assert bot.events[-1] == f"end {game.verdict} {game.winner == 0}"
    opponent_moves = len(game.moves[1::2])
    last_was_opponent = len(game.moves) % 2 == 0
    assert bot.events.count("opponent") == opponent_moves - last_was_opponent


class ReturnsNone(Agent):
    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        return None


class PlaysOccupied(Agent):
    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        return "PLACE(0-0, 0-1, 0-2, 0-3)"


class Raises(Agent):
    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        raise RuntimeError("my evaluation blew up")


class Sleeps(RandomBot):
    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        time.sleep(0.2)  # not a wait: a slow bot is the case under test
        return super().choose_move(state, clocks)


@pytest.mark.parametrize(
    ("bot", "verdict", "words"),
    [
        (ReturnsNone(), "illegal_move", "None, which is not a move"),
        (PlaysOccupied(), "illegal_move", "is occupied"),
        (Raises(), "runtime_error", "RuntimeError: my evaluation blew up"),
        (Sleeps(), "time", "exceeded its wall time: used 0.2"),
    ],
)
def test_faults_end_the_game_with_the_right_verdict(bot: Agent, verdict: str, words: str) -> None:
    """None, an occupied cell, an exception and a slow move each lose with their verdict."""
    game = play_local(bot, "random", seat=1, move_time=0.1, grace=0.0)
    assert game.verdict is Verdict(verdict) and game.termination is Verdict(verdict)
    assert game.offender == 1 and game.winner == 0
    assert words in game.reason
    assert game.reason.startswith("BLUE")
