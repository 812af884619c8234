"""Openings books: the shipped books load and are balanced; bad books are refused; pairs
share an opening with sides swapped; records carry it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from client_sdk.examples.greedy_bot import GreedyBot
from engine.registry import load_game
from referee.analysis.local_pairs import play_pairs
from referee.analysis.openings import (
    BookError,
    book_from_json,
    generate,
    load_book,
)


@pytest.mark.parametrize("game", ["tetress", "att"])
def test_shipped_books_load_and_name_their_command(game: str) -> None:
    """Every shipped opening replays to its position; the book says how it was made."""
    book = load_book(game)
    assert book.game == game and len(book.openings) >= 20
    assert book.command.startswith(f"referee openings generate --game {game}")
    assert len({o.id for o in book.openings}) == len(book.openings)


def test_bad_books_are_refused_with_a_reason(tmp_path: Path) -> None:
    """Illegal moves, a wrong position, unknown games, duplicate ids and non-JSON fail."""
    good = load_book("tetress").to_json()
    cases = {
        "move 1": {**good, "openings": [{"id": "a", "moves": ["PLACE(0-0, 0-1, 0-2, 5-5)"]}]},
        "lead to": {**good, "openings": [{**good["openings"][0], "position": "x"}]},
        "unknown game": {**good, "game": "chess"},
        "used twice": {**good, "openings": [good["openings"][0], good["openings"][0]]},
        "not an openings book": {"format": "other"},
    }
    for words, data in cases.items():
        with pytest.raises(BookError, match=words):
            book_from_json(data)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(BookError, match="not a JSON book"):
        load_book(bad)
    with pytest.raises(BookError, match="No such file"):
        load_book(tmp_path / "missing.json")
    with pytest.raises(BookError, match="is for tetress"):
        load_book("tetress").check_game(load_game("att"))


def test_generation_is_reproducible_and_balanced() -> None:
    """The same seed gives the same book; every opening is within the balance limit."""
    game = load_game("tetress")
    a = generate(game, 2, 4, seed=9, max_tries=400)
    b = generate(game, 2, 4, seed=9, max_tries=400)
    assert a.to_json() == b.to_json()
    assert all(abs(o.eval) <= 6.0 for o in a.openings)
    assert json.loads(json.dumps(book_from_json(a.to_json()).to_json())) == a.to_json()


def test_book_order_cycles() -> None:
    """Pair n takes opening n of the book, cycling."""
    book = load_book("att")
    n = len(book.openings)
    assert book.pick(0) == book.openings[0] and book.pick(n + 1) == book.openings[1]


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
