"""Making openings books: generation is reproducible and balanced; the shipped books are
balanced in play, pairs sharing an opening with sides swapped. (Reading books:
tests/engine/test_openings_book.py.)"""

from __future__ import annotations

import json

import pytest

from client_sdk.examples.greedy_bot import GreedyBot
from engine.records.openings import book_from_json, load_book
from engine.registry import load_game
from referee.analysis.local_pairs import play_pairs
from referee.analysis.openings import generate


def test_generation_is_reproducible_and_balanced() -> None:
    """The same seed gives the same book; every opening is within the balance limit."""
    game = load_game("tetress")
    a = generate(game, 2, 4, seed=9, max_tries=400)
    b = generate(game, 2, 4, seed=9, max_tries=400)
    assert a.to_json() == b.to_json()
    assert all(abs(o.eval) <= 6.0 for o in a.openings)
    assert json.loads(json.dumps(book_from_json(a.to_json()).to_json())) == a.to_json()


@pytest.mark.slow
def test_openings_are_balanced_between_equal_bots() -> None:
    """Greedy against greedy (different seeds), 24 pairs over the first 8 Tetress openings with
    sides swapped: the pair score stays within three standard errors of 50% (the swap cancels
    each opening's seat advantage), and the first seat's score over all games stays between
    30% and 70% (the book's positions do not hand the game to one seat)."""
    data = load_book("tetress").to_json()
    book = book_from_json({**data, "openings": data["openings"][:8]})
    games = play_pairs(GreedyBot, GreedyBot, book, 24, "tetress", "a", "b")
    pairs = [(games[i].score + games[i + 1].score) / 2 for i in range(0, len(games), 2)]
    mean = sum(pairs) / len(pairs)
    var = sum((p - mean) ** 2 for p in pairs) / (len(pairs) - 1)
    assert abs(mean - 0.5) <= 3 * (var / len(pairs)) ** 0.5 + 1e-9
    first_seat = sum(g.first_score for g in games) / len(games)
    assert 0.3 <= first_seat <= 0.7
