"""One conformance test for every registered game: random play through the Game/State contract.

Games are taken from the registry, so a newly registered game is covered with no edit here.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine import State, game_names, load_game

SEEDS = range(8)
MAX_PLIES = 200
SAMPLE = 10


def _snapshot(state: State[Any]) -> tuple[object, ...]:
    return (state.to_string(), state.zobrist, state.ply, state.to_move, state.outcome())


def test_registry_lists_every_builtin_game() -> None:
    """Both games of the platform are registered and load with their defaults."""
    names = game_names()
    assert {"att", "tetress"} <= set(names)
    for name in names:
        assert load_game(name).name == name


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", game_names())
def test_random_play_keeps_the_contract(name: str, seed: int) -> None:
    """apply/undo symmetry, position strings, both notations and outcomes stay consistent."""
    rng = random.Random(f"{name}-{seed}")
    game = load_game(name)
    state = game.new_state()
    assert len(game.seat_names) == 2 and state.ply == 0
    for _ in range(MAX_PLIES):
        legal = state.legal_moves
        moves = list(legal)
        over = state.outcome()
        assert state.is_over() == (over is not None)
        assert (len(legal) == 0) == (over is not None), "no legal moves iff the game is over"
        assert len(moves) == len(legal) == len(set(moves))
        if over is not None:
            assert over.winner in (None, 0, 1)
            break
        text = state.to_string()
        again = game.state_from_string(text)
        assert again.to_string() == text and again.zobrist == state.zobrist
        assert again.to_move == state.to_move
        grid = state.grid()
        assert grid and len({len(row) for row in grid}) == 1
        for move in rng.sample(moves, min(SAMPLE, len(moves))):
            assert move in legal
            state.check(move)
            assert game.move_from_text(game.move_to_text(move)) == move
            assert state.parse_san(state.san(move)) == move
        move = rng.choice(moves)
        before = _snapshot(state)
        history = state.history
        twin = state.copy()
        state.apply(move)
        assert state.ply == before[2] + 1
        assert state.history == (*history, move)
        assert _snapshot(twin) == before, "a copy must not follow its original"
        assert state.undo() == move
        assert _snapshot(state) == before and state.history == history
        state.apply(move)
    # Unwind the whole game: every position comes back.
    while state.history:
        state.undo()
    assert _snapshot(state) == _snapshot(game.new_state())
    with pytest.raises(IndexError):
        state.undo()
