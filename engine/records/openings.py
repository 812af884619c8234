"""Openings books: balanced starting sequences for one game, one per game pair, sides swapped.

A book is a JSON file::

    {"format": "tetromino-openings/1", "game": "tetress", "params": {...},
     "command": "referee openings generate ...",
     "openings": [{"id": "tetress-001", "moves": ["PLACE(...)", ...],
                   "position": "...", "eval": 0.4}, ...]}

``moves`` are long-form (wire) move texts played from the standard start; ``position`` is the
position they lead to (checked on load); ``eval`` is the reference search's score of it for
the side to move. Whoever plays a game from a book (the referee, ``client_sdk play
--openings``) plays the moves for both seats before asking either bot for a move, so every bot
(course bots included, which rebuild their board from the moves) sees an ordinary game that
happens to start with these moves; records hold them as moves with a ``book`` comment and name
the opening in an ``Opening`` tag.

This is the book's model, read by the referee's tournaments, workers and tools and by the SDK
alike; the shipped books are package data beside it (``books/``). Unlike the rest of
:mod:`engine.records` it reads and writes files. Making a book is the referee's
(:func:`referee.analysis.openings.generate`, ``docs/tools.md``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import BookError, EngineError
from engine.game import Game
from engine.registry import load_game

FORMAT = "tetromino-openings/1"
#: The shipped books, by game.
BOOKS_DIR = Path(__file__).with_name("books")
#: A book file larger than this is refused (a book is a few kilobytes).
MAX_BOOK_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Opening:
    """One book entry."""

    id: str
    moves: tuple[str, ...]
    position: str
    eval: float = 0.0


@dataclass(frozen=True, slots=True)
class Book:
    """A checked book for one game."""

    game: str
    params: Mapping[str, int]
    openings: tuple[Opening, ...]
    command: str = ""
    source: str = ""

    def pick(self, pair: int) -> Opening:
        """The opening of game pair number ``pair`` (0, 1, ...): the book in order, cycling."""
        return self.openings[pair % len(self.openings)]

    def find(self, opening_id: str) -> Opening:
        for opening in self.openings:
            if opening.id == opening_id:
                return opening
        raise BookError(f"the book has no opening {opening_id!r}")

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "game": self.game,
            "params": dict(self.params),
            "command": self.command,
            "openings": [
                {"id": o.id, "moves": list(o.moves), "position": o.position, "eval": o.eval}
                for o in self.openings
            ],
        }

    def check_game(self, game: Game[Any]) -> None:
        """Raise :class:`BookError` unless the book was made for ``game`` (name and params)."""
        if game.name != self.game or dict(game.params) != dict(self.params):
            raise BookError(
                f"the book is for {self.game} {dict(self.params)}, "
                f"not {game.name} {dict(game.params)}"
            )


def default_book_path(game: str) -> Path:
    return BOOKS_DIR / f"{game}.json"


def load_book(path: str | Path) -> Book:
    """Read and check a book: every opening is replayed and must reach its position."""
    file = Path(path)
    if not file.is_file() and not file.suffix and default_book_path(str(path)).is_file():
        file = default_book_path(str(path))  # "tetress" names the shipped book
    try:
        if file.stat().st_size > MAX_BOOK_BYTES:
            raise BookError(f"{path}: larger than {MAX_BOOK_BYTES} bytes")
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BookError(f"{path}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BookError(f"{path}: not a JSON book ({exc})") from exc
    return book_from_json(data, source=str(file))


def book_from_json(data: Any, source: str = "") -> Book:
    where = source or "book"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BookError(f"{where}: not an openings book (format {FORMAT!r} expected)")
    params = data.get("params", {})
    entries = data.get("openings")
    if not isinstance(params, dict) or not isinstance(entries, list) or not entries:
        raise BookError(f"{where}: needs 'params' (an object) and a non-empty 'openings' list")
    try:
        game = load_game(str(data.get("game")), **{str(k): int(v) for k, v in params.items()})
    except (EngineError, TypeError, ValueError) as exc:
        raise BookError(f"{where}: {exc}") from exc
    openings = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        opening = _opening(game, entry, f"{where}: opening {index + 1}")
        if opening.id in seen:
            raise BookError(f"{where}: opening id {opening.id!r} is used twice")
        seen.add(opening.id)
        openings.append(opening)
    return Book(game.name, dict(game.params), tuple(openings), str(data.get("command", "")), source)


def _opening(game: Game[Any], entry: Any, where: str) -> Opening:
    if not isinstance(entry, dict):
        raise BookError(f"{where}: not an object")
    moves = entry.get("moves")
    if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
        raise BookError(f"{where}: 'moves' must be a list of move texts")
    state = game.new_state()
    for ply, text in enumerate(moves, 1):
        try:
            state.apply(game.move_from_text(text))
        except EngineError as exc:
            raise BookError(f"{where}: move {ply} {text!r}: {exc}") from exc
    if state.is_over():
        raise BookError(f"{where}: the game is over after its moves")
    position = state.to_string()
    if entry.get("position", position) != position:
        raise BookError(f"{where}: its moves lead to {position!r}, not to its 'position'")
    value = entry.get("eval", 0.0)
    return Opening(
        str(entry.get("id") or f"{game.name}-{len(moves)}"),
        tuple(moves),
        position,
        float(value) if isinstance(value, int | float) else 0.0,
    )


def write_book(book: Book, path: str | Path) -> None:
    """Write ``book`` as its JSON file."""
    Path(path).write_text(json.dumps(book.to_json(), indent=1) + "\n", encoding="utf-8")


def opening_labels(opening: Opening, book: Book) -> dict[str, str]:
    """The record tags naming the opening (labels become capitalised tags)."""
    return {"opening": opening.id, "openingBook": Path(book.source).name or book.game}
