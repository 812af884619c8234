"""``referee openings``: generate, check and list openings books (see docs/tools.md)."""

from __future__ import annotations

import argparse
import sys

from referee.commands._common import Subparsers, add_game_options, game_params


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "openings",
        help="generate, check and list openings books",
        description=(
            "An openings book holds balanced starting sequences; matches, tournaments and "
            "SPRT tests take one with --openings FILE (or a game name for the shipped book) "
            "and play each game pair from one opening with the sides swapped."
        ),
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    gen = sub.add_parser("generate", help="make a new book with the reference search")
    add_game_options(gen)
    gen.add_argument("--count", type=int, default=40, help="openings (default %(default)s)")
    gen.add_argument("--plies", type=int, default=4, help="moves per opening (default 4)")
    gen.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    gen.add_argument(
        "--nodes", type=int, default=1500, help="search nodes per judged position (default 1500)"
    )
    gen.add_argument("--limit", type=float, help="largest |eval| kept (default: per game)")
    gen.add_argument("-o", "--output", required=True, metavar="FILE", help="book file to write")
    gen.set_defaults(func=_generate)
    show = sub.add_parser("show", help="check a book and list its openings")
    show.add_argument("book", metavar="FILE", help="book file, or a game name (shipped book)")
    show.set_defaults(func=_show)
    parser.set_defaults(func=lambda args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    """``referee openings`` with no action: its help, and exit status 2."""
    parser.print_help()
    return 2


def _generate(args: argparse.Namespace) -> int:
    from engine.errors import BookError
    from engine.records.openings import write_book
    from engine.registry import load_game
    from referee.analysis.openings import generate

    if not 1 <= args.count <= 10_000 or not 1 <= args.plies <= 60:
        print("referee openings: --count 1..10000 and --plies 1..60", file=sys.stderr)
        return 2
    try:
        game = load_game(args.game, **game_params(args))
    except (ValueError, TypeError, KeyError) as exc:
        print(f"referee openings: {exc}", file=sys.stderr)
        return 2
    command = (
        f"referee openings generate --game {game.name} --count {args.count} "
        f"--plies {args.plies} --seed {args.seed} --nodes {args.nodes}"
        + (f" --limit {args.limit:g}" if args.limit is not None else "")
        + f" -o {args.output}"
    )
    try:
        book = generate(
            game,
            args.count,
            args.plies,
            seed=args.seed,
            nodes=args.nodes,
            limit=args.limit,
            command=command,
            max_tries=200 * args.count,
        )
    except BookError as exc:
        print(f"referee openings: {exc}", file=sys.stderr)
        return 1
    write_book(book, args.output)
    print(f"wrote {len(book.openings)} {game.name} openings to {args.output}")
    return 0


def _show(args: argparse.Namespace) -> int:
    from engine.errors import BookError
    from engine.records.openings import load_book

    try:
        book = load_book(args.book)
    except BookError as exc:
        print(f"referee openings: {exc}", file=sys.stderr)
        return 2
    print(f"{book.source}: {len(book.openings)} {book.game} openings {dict(book.params)}")
    if book.command:
        print(f"made by: {book.command}")
    for o in book.openings:
        print(f"{o.id:>14}  eval {o.eval:+7.2f}  {' '.join(o.moves)}")
    return 0
