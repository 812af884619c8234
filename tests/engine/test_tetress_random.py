"""Complete random games through the public API, and the random-move helpers."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine.outcome import Termination
from engine.tetress import Tetress, TetressState, play_random_game, random_move
from engine.tetress.play import nth_bit


@pytest.mark.parametrize("seed", range(12))
def test_random_games_end_consistently(seed: int) -> None:
    """A random game played with checked apply ends by the rules, and the end is consistent."""
    rng = random.Random(seed)
    game = Tetress()
    state = game.new_state()
    while state.outcome() is None:
        legal = state.legal_moves
        assert len(legal) > 0
        move = random_move(state, rng)
        assert move in legal
        state.apply(move)
    outcome = state.outcome()
    assert outcome is not None
    assert len(state.history) == state.ply <= 150
    assert len(state.legal_moves) == 0
    if outcome.termination == Termination.NO_LEGAL_MOVE:
        assert outcome.winner == 1 - state.to_move
    else:
        red, blue = state.token_counts
        assert state.ply == 150
        assert outcome.winner == (None if red == blue else 0 if red > blue else 1)
    with pytest.raises(ValueError):
        random_move(state, rng)
    replay = game.new_state()
    for move in state.history:
        replay.apply(move)
    assert replay.to_string() == state.to_string() and replay.zobrist == state.zobrist


def test_fast_random_game_matches_checked_replay() -> None:
    """play_random_game (unchecked fast path) only ever plays legal moves."""
    game = Tetress()
    for seed in range(20):
        state = play_random_game(game.new_state(), random.Random(seed))
        assert state.outcome() is not None
        replay = game.new_state()
        for move in state.history:
            replay.apply(move)
        assert replay.to_string() == state.to_string()
        assert replay.outcome() == state.outcome()


def test_short_turn_limit_games_end_on_tokens() -> None:
    """With a small turn limit, random games end by TURN_LIMIT at exactly that ply."""
    game = Tetress(turn_limit=10)
    for seed in range(10):
        state = play_random_game(game.new_state(), random.Random(seed))
        outcome = state.outcome()
        assert outcome is not None and outcome.termination == Termination.TURN_LIMIT
        assert state.ply == 10


def test_random_move_reaches_every_legal_move() -> None:
    """random_move picks among all legal moves (each of a small set turns up)."""
    rows = ["bbbbbbbbbb."] * 11
    rows[0] = "..........."
    rows[5] = "bbbbbbbbb.."
    text = "/".join(rows) + " b 9"
    state: TetressState = Tetress().state_from_string(text)
    legal = set(state.legal_moves)
    assert 2 <= len(legal) <= 60
    rng = random.Random(7)
    counts = Counter(random_move(state, rng) for _ in range(200 * len(legal)))
    assert set(counts) == legal
    assert min(counts.values()) > 100  # roughly uniform: expected 200 each


def test_nth_bit_finds_each_set_bit() -> None:
    """nth_bit(mask, n) is the position of the n-th set bit, for masks up to 256 bits."""
    rng = random.Random(3)
    for _ in range(300):
        mask = rng.getrandbits(256) & rng.getrandbits(256)
        positions = [i for i in range(256) if mask >> i & 1]
        for n, pos in enumerate(positions):
            assert nth_bit(mask, n) == pos
