"""Openings books, read: the shipped books load; bad books are refused with a reason; the
book's order cycles over game pairs. (Making them: tests/tools/test_openings.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import BookError
from engine.records.openings import book_from_json, load_book
from engine.registry import load_game


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


def test_book_order_cycles() -> None:
    """Pair n takes opening n of the book, cycling."""
    book = load_book("att")
    n = len(book.openings)
    assert book.pick(0) == book.openings[0] and book.pick(n + 1) == book.openings[1]
