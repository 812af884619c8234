"""``referee leaderboard``: the Elo table of a tournament (or of every game), the head-to-head
cross table, the likelihood-of-superiority matrix, the live ladder; CSV and JSON export."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from referee.commands._arena import add_db_option, fail, open_repo
from referee.commands._common import Subparsers, stored_ref

if TYPE_CHECKING:
    from referee.storage import Repository


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "leaderboard",
        help="the Elo table of a tournament or of every game",
        description=(
            "Maximum-likelihood Elo with its 95% interval (the anchor is stated under the "
            "table), the incremental K=32 Elo beside it, games, W/D/L, score and forfeits by "
            "verdict. Without a tournament: every stored game."
        ),
    )
    parser.add_argument(
        "tournament", nargs="?", type=stored_ref, help="tournament name or id (default: all games)"
    )
    parser.add_argument("--cross", action="store_true", help="also the head-to-head cross table")
    parser.add_argument("--los", action="store_true", help="also the likelihood of superiority")
    parser.add_argument("--anchor", metavar="BOT", help="pin this bot at --anchor-rating")
    parser.add_argument("--anchor-rating", type=float, default=1500.0, help="default %(default)g")
    parser.add_argument(
        "--anchors",
        action="store_true",
        help="pin the reference bots and examples at their calibrated Elo (docs/tools.md)",
    )
    parser.add_argument("--csv", metavar="FILE", help="write the table as CSV (- for stdout)")
    parser.add_argument(
        "--json",
        metavar="FILE",
        help="write the table, cross table and LOS as JSON (- for stdout)",
    )
    parser.add_argument(
        "--ladder",
        nargs="?",
        const="main",
        metavar="NAME",
        help="show the live openskill ladder instead (all games; default name main)",
    )
    parser.add_argument(
        "--game",
        metavar="NAME",
        help="the game whose table or ladder to show (default: the tournament's game, else "
        "tetress); two games' ratings are never one table",
    )
    parser.add_argument(
        "--server",
        metavar="HOST:PORT",
        help="ask this running referee (its Arena service) instead of reading a database",
    )
    add_db_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.server:
        from referee.commands._remote_tables import remote_leaderboard

        return remote_leaderboard(args)
    return _local(args)


def _local(args: argparse.Namespace) -> int:
    from referee.commands._arena import (
        console,
        cross_table,
        leaderboard_table,
        los_table,
        print_order,
        table_csv,
        table_json,
        write_out,
    )
    from referee.storage import NotFoundError
    from referee.tournament.standings import standings

    repo = open_repo(args)
    if args.ladder:
        return _ladder(repo, args)
    t = None
    if args.tournament is not None:
        try:
            t = repo.get_tournament(args.tournament)
        except NotFoundError as exc:
            return fail("leaderboard", exc)
        if args.game and args.game != t.settings.game:
            return fail(
                "leaderboard", f"tournament {t.name} plays {t.settings.game}, not {args.game}"
            )
    game = t.settings.game if t else (args.game or "tetress")
    if args.anchors:
        from referee.commands._anchored import print_anchored

        return print_anchored(repo, t, game)
    try:
        st = standings(
            repo,
            t.id if t else None,
            anchor=args.anchor,
            anchor_rating=args.anchor_rating,
            game=game,
        )
    except (KeyError, ValueError) as exc:
        return fail("leaderboard", f"bad anchor: {exc}")
    name = t.name if t else None
    if args.csv:
        write_out(args.csv, table_csv(st))
    if args.json:
        write_out(args.json, table_json(st, name))
    if args.csv == "-" or args.json == "-":
        return 0
    out = console()
    title = f"{t.name} ({t.settings.format}, {t.settings.game})" if t else f"All {game} games"
    out.print(leaderboard_table(st, title))
    print_order(st, t)  # an adaptive tournament: how sure each neighbours' order is
    if args.cross:
        out.print(cross_table(st))
    if args.los:
        out.print(los_table(st))
    return 0


def _ladder(repo: Repository, args: argparse.Namespace) -> int:
    """``--ladder``: the live ladder of one game."""
    from referee.commands._arena import console, ladder_table
    from referee.tournament.ladder import compute_ladder

    game = args.game or "tetress"
    ladder = compute_ladder(repo, game)
    console().print(
        ladder_table(ladder.rows, f"Ladder {args.ladder}, {game} ({ladder.games} games)")
    )
    return 0
