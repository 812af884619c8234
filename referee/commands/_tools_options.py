"""The tools' options: ``--openings`` for ``referee tournament`` and for the pair tests
(``grade``, ``sprt``), the options the tools that launch stored bots share (``grade``,
``sprt``, ``similarity``), and ``tournament export --pgn``."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from referee.commands._arena import add_db_option, fail, open_repo
from referee.commands._common import (
    Subparsers,
    add_limit_options,
    add_log_options,
    add_sandbox_option,
    stored_ref,
)

if TYPE_CHECKING:
    from engine.game import Game
    from engine.records.openings import Book


def add_openings_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--openings",
        metavar="FILE",
        help="openings book (a file, or a game name for the shipped book): each game pair "
        "starts from one opening with the sides swapped",
    )


def add_pair_book_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--openings",
        metavar="FILE",
        help="openings book (default: the shipped book of the game; 'none': standard start)",
    )


def add_tool_run_options(parser: argparse.ArgumentParser, *, move_time: float = 0.0) -> None:
    """What a tool that launches stored bots and reports on them takes last: the bots'
    limits, the sandbox, the database and its logs (warnings by default); ``run`` is its
    entry point."""
    add_limit_options(parser, move_time=move_time)
    add_sandbox_option(parser)
    add_db_option(parser)
    add_log_options(parser, "WARNING")


def pair_book(args: argparse.Namespace, game: Game[Any]) -> Book | None:
    """The book a pair test plays from: ``--openings``, else the game's shipped book;
    ``None`` (the standard start) for ``--openings none``. Checked against ``game``."""
    from engine.records.openings import default_book_path, load_book

    if (args.openings or "").lower() == "none":
        return None
    book = load_book(args.openings or default_book_path(game.name))
    book.check_game(game)
    return book


def store_openings(
    args: argparse.Namespace, options: dict[str, object], params: Mapping[str, int]
) -> None:
    """Put the book named by ``--openings`` into the tournament's options (checked against
    its game): the book itself is stored, so resuming never depends on the file."""
    if not getattr(args, "openings", None):
        return
    from engine.records.openings import load_book
    from engine.registry import load_game

    book = load_book(args.openings)
    book.check_game(load_game(args.game, **params))
    options["openings"] = book.to_json() | {"source": book.source}


def register_export(sub: Subparsers) -> None:
    export = sub.add_parser(
        "export", help="every game of a tournament in one file (PGN-like, cutechess -pgnout)"
    )
    export.add_argument("name", type=stored_ref, help="tournament name or id")
    export.add_argument("--pgn", action="store_true", help="PGN-like records (the default)")
    export.add_argument("-o", "--output", default="-", help="file to write (default stdout)")
    add_db_option(export)
    export.set_defaults(func=_export)


def _export(args: argparse.Namespace) -> int:
    from referee.analysis.export import tournament_pgn
    from referee.commands._arena import check_output, write_out
    from referee.storage import NotFoundError

    if problem := check_output("-o", args.output):
        return fail("tournament export", problem)
    repo = open_repo(args)
    try:
        text, count = tournament_pgn(repo, args.name)
        write_out(args.output, text)
    except (NotFoundError, ValueError) as exc:
        return fail("tournament export", exc)
    if args.output != "-":
        print(f"wrote {count} games to {args.output}")
    return 0
