"""``referee games``: list stored games (newest last)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NotRequired, TypedDict

from referee.commands._arena import add_db_option, fail, open_repo
from referee.commands._common import Subparsers, stored_ref

if TYPE_CHECKING:
    from referee.commands._fit import FitTable
    from referee.storage import GameSummary


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "games",
        help="list stored games",
        description="Stored games, oldest first; export one with: referee game export ID",
    )
    parser.add_argument(
        "--tournament", metavar="T", type=stored_ref, help="only this tournament (name or id)"
    )
    parser.add_argument("--bot", metavar="BOT", help="only games of this bot (name[@version])")
    parser.add_argument("--game", metavar="NAME", help="only games of this game (e.g. tetress)")
    parser.add_argument("--limit", type=int, default=100, help="at most this many (default 100)")
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument(
        "--validation",
        action="store_true",
        help="also uploads' validation games (private to their uploader; never rated)",
    )
    add_db_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from referee.commands._arena import console
    from referee.storage import NotFoundError
    from referee.storage.botnames import AmbiguousName, resolve_bot_name

    repo = open_repo(args)
    try:
        t_id = None
        if args.tournament is not None:
            t_id = repo.get_tournament(args.tournament).id
        version_id = None
        if args.bot:
            name, sep, version = args.bot.partition("@")
            name = resolve_bot_name(repo, name)
            version_id = repo.find_bot_version(name, version if sep else None).id
    except (NotFoundError, AmbiguousName) as exc:
        return fail("games", exc)
    labels = {v.id: v.label for v in repo.list_bot_versions()}
    games = repo.list_games(
        tournament_id=t_id,
        bot_version_id=version_id,
        limit=args.limit,
        offset=args.offset,
        game=args.game,
        include_validation=args.validation,
    )
    if args.json:
        for g in games:
            print(json.dumps(game_json(g, labels)))
        return 0
    console().print(_games_table(games, labels))
    return 0


class GameJson(TypedDict):
    """One game as ``games --json`` prints it; ``game show`` adds each seat's ``output`` and,
    with ``--json``, the ``moves``."""

    id: int
    uid: str
    tournament_id: int | None
    game: str
    seats: list[str | None]
    result: str
    verdict: str
    termination: str | None
    reason: str
    voided: bool
    counted: bool
    plies: int
    sandbox: str | None
    kind: str
    finished_at: str
    output: NotRequired[list[str]]
    # Passed through to JSON as the web's move rows are.
    moves: NotRequired[list[dict[str, object]]]


def game_json(g: GameSummary, labels: Mapping[int, str]) -> GameJson:
    """One game as ``games --json`` and ``game show --json`` print it."""
    return {
        "id": g.id,
        "uid": g.uid,
        "tournament_id": g.tournament_id,
        "game": g.game,
        "seats": [labels.get(s.bot_version_id) for s in g.seats],
        "result": g.result,
        "verdict": str(g.verdict),
        "termination": None if g.termination is None else str(g.termination),
        "reason": g.reason,
        "voided": g.voided,
        "counted": g.counted,
        "plies": g.plies,
        "sandbox": g.sandbox,
        "kind": str(g.kind),
        "finished_at": g.finished_at.isoformat(),
    }


def _games_table(games: Sequence[GameSummary], labels: Mapping[int, str]) -> FitTable:
    """The games, laid out for the terminal: the id column (what ``game export ID`` takes)
        never gives way, a game or sandbox common to every row is said once under the table, long
    names are cut with "…", the reason wraps; piped, one row a line."""
    from referee.commands._arena import display_names
    from referee.commands._fit import Col, FitTable

    shown = display_names(sorted(set(labels.values())))
    columns = [
        Col("id", "right"),
        Col("game", same=True),
        Col("first", shrink=True, max_width=24),
        Col("second", shrink=True, max_width=24),
        Col("result"),
        Col("verdict", same=True),
        Col("plies", "right"),
        Col("sandbox", shrink=True, max_width=14, same=True),
        Col("reason", wrap=True, min_width=12),
    ]
    rows = []
    for g in games:
        seats = [shown.get(labels.get(s.bot_version_id, "?"), "?") for s in g.seats]
        flag = " (void)" if g.voided and g.counted else ("" if g.counted else " (replayed)")
        rows.append(
            [
                str(g.id),
                g.game,
                seats[0] if seats else "",
                seats[1] if len(seats) > 1 else "",
                g.result + flag,
                str(g.verdict),
                str(g.plies),
                g.sandbox or "-",
                g.reason,
            ]
        )
    return FitTable(columns, rows, title=f"Games ({len(games)})")
