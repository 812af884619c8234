"""Game pairs between two in-process agents (no referee server): for calibration and for
checking opening balance, where the search is measured, not the transport."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.records.openings import Book
from referee.ratings.results import GameResult


@dataclass(frozen=True, slots=True)
class LocalGame:
    """One game: the agents in seat order, the first seat's score, the opening."""

    first: str
    second: str
    first_score: float
    opening: str
    a_seat: int

    @property
    def score(self) -> float:
        """The score of the pair's first agent (``a``)."""
        return self.first_score if self.a_seat == 0 else 1.0 - self.first_score

    def result(self) -> GameResult:
        return GameResult(self.first, self.second, self.first_score)


def play_from(agents: list[Any], game_name: str, opening: tuple[str, ...]) -> float:
    """Play one game in-process from an opening; the first seat's score."""
    from engine.registry import load_game

    game = load_game(game_name)
    state = game.new_state()
    for text in opening:
        state.apply(game.move_from_text(text))
    while not state.is_over():
        agent = agents[state.to_move]
        move = agent.choose_move(state.copy(), _NO_CLOCK)
        if isinstance(move, str):
            move = game.move_from_text(move)
        state.apply(move)
    outcome = state.outcome()
    assert outcome is not None
    return 0.5 if outcome.winner is None else 1.0 if outcome.winner == 0 else 0.0


def play_pairs(
    a: type, b: type, book: Book, pairs: int, game_name: str, a_name: str, b_name: str
) -> list[LocalGame]:
    """``pairs`` pairs of ``a`` against ``b`` (classes taking ``seed``), sides swapped."""
    games = []
    for number in range(pairs):
        opening = book.pick(number)
        for a_seat in (0, 1):
            agents = [a(seed=number), b(seed=1000 + number)]
            names = [a_name, b_name]
            if a_seat == 1:
                agents.reverse()
                names.reverse()
            first = play_from(agents, game_name, opening.moves)
            games.append(LocalGame(names[0], names[1], first, opening.id, a_seat))
    return games


class _Clock:
    time_left = None
    opponent_time_left = None
    move_limit = None
    increment = 0.0
    budget = None


_NO_CLOCK: Any = _Clock()
