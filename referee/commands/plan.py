"""``referee plan``: how many games, CPU-hours and hours a tournament of N teams needs."""

from __future__ import annotations

import argparse

from referee.commands._common import Subparsers
from referee.commands._tournament_options import FORMATS


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="games, CPU-hours and hours to finish a tournament of N teams",
        description=(
            "Plan a tournament before creating it: its games (adaptive: at most, it may "
            "settle sooner), the CPU-hours its bots use (measured CPU per bot per game from "
            "the stored games of --db, else 40 s; never more than --time) and the hours to "
            "finish on --cores worker cores, one game per core."
        ),
    )
    parser.add_argument(
        "--teams", required=True, help="number of teams (bots); a comma list for a table"
    )
    parser.add_argument(
        "--format",
        default="adaptive",
        help="format, or a comma list: " + ", ".join(sorted(FORMATS)) + " (default adaptive)",
    )
    parser.add_argument("--time", type=float, default=180.0, help="seconds per bot per game")
    parser.add_argument("--cores", type=int, required=True, help="worker cores (games at once)")
    parser.add_argument("--cycles", type=int, help="round robin and gauntlet cycles (default 1)")
    parser.add_argument("--rounds", type=int, help="Swiss rounds (default ceil(log2 n))")
    parser.add_argument(
        "--budget", type=int, help="adaptive: game budget (default a quarter of a round robin)"
    )
    parser.add_argument("--game", default="tetress", help="game whose stored games to measure")
    parser.add_argument("--db", help="a database whose stored games give the CPU per bot per game")
    parser.set_defaults(func=run)


def _measured(args: argparse.Namespace) -> list[float]:
    if not args.db:
        return []
    from referee.commands._arena import open_repo

    repo = open_repo(args)
    return [
        seat.time_used_s
        for g in repo.list_games(include_aborted=False, limit=None, game=args.game)
        for seat in g.seats
        if seat.time_used_s > 0
    ]


def run(args: argparse.Namespace) -> int:
    from referee.commands._arena import console, fail
    from referee.commands._safe import SafeTable as Table
    from referee.storage import TournamentFormat
    from referee.tournament.plan import Plan, cpu_per_bot
    from referee.tournament.schedule import planned_games

    try:
        teams = [int(t) for t in args.teams.split(",")]
        formats = [FORMATS[f.strip()] for f in args.format.split(",")]
    except (ValueError, KeyError) as exc:
        return fail("plan", f"bad --teams or --format: {exc}")
    if args.cores < 1 or any(t < 2 for t in teams):
        return fail("plan", "a tournament needs at least two teams and one core")
    per_bot, source = cpu_per_bot(_measured(args), args.time)
    table = Table(
        title=f"Tournament plan on {args.cores} cores",
        caption=f"CPU per bot per game: {per_bot:g} s ({source}); one game per core",
    )
    for column in ("teams", "format", "games", "CPU-hours", "hours to finish"):
        table.add_column(column, justify="left" if column == "format" else "right")
    for fmt in formats:
        for n in teams:
            games = planned_games(
                TournamentFormat(fmt), n, cycles=args.cycles, rounds=args.rounds, budget=args.budget
            )
            plan = Plan(n, fmt, games, per_bot, args.cores)
            table.add_row(str(n), fmt, f"{games:,}", f"{plan.cpu_hours:,.1f}", f"{plan.hours:,.1f}")
    console().print(table)
    return 0
