"""``referee game export ID``: a stored game's record as PGN-like text, JSON or an SVG picture;
``referee game show ID``: its summary (result, verdict, seats, the isolation its bots ran under)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from referee.commands._arena import add_db_option, fail, open_repo
from referee.commands._common import Subparsers, stored_ref

if TYPE_CHECKING:
    from referee.storage import GameDetail


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser("game", help="export a stored game's record")
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = sub.add_parser(
        "export",
        help="a game's record (PGN-like text by default)",
        description="ID is the game's number (see 'referee games') or its uid.",
    )
    export.add_argument("id", type=stored_ref, help="the game's id or uid")
    form = export.add_mutually_exclusive_group()
    form.add_argument("--pgn", action="store_const", dest="form", const="pgn", help="(default)")
    form.add_argument("--json", action="store_const", dest="form", const="json")
    form.add_argument(
        "--svg", action="store_const", dest="form", const="svg", help="the position as a picture"
    )
    export.add_argument("--ply", type=int, help="--svg: the position after this many moves")
    export.add_argument("-o", "--output", default="-", help="file to write (default stdout)")
    add_db_option(export)
    export.set_defaults(func=_export, form="pgn")
    show = sub.add_parser(
        "show",
        help="a game's summary, with the isolation its bots ran under",
        description="ID is the game's number (see 'referee games') or its uid.",
    )
    show.add_argument("id", type=stored_ref, help="the game's id or uid")
    show.add_argument("--json", action="store_true", help="one JSON object")
    show.add_argument(
        "--output", action="store_true", help="each seat's captured output (stdout and stderr)"
    )
    add_db_option(show)
    show.set_defaults(func=_show)


def _show(args: argparse.Namespace) -> int:
    from referee.commands.games import game_json
    from referee.storage import NotFoundError
    from referee.text.names import display

    repo = open_repo(args)
    try:
        detail = repo.get_game(args.id)
    except NotFoundError as exc:
        return fail("game show", exc)
    labels = {v.id: v.label for v in repo.list_bot_versions()}
    summary = game_json(detail.summary, labels)
    if args.output:
        summary["output"] = [text or "" for text in detail.stderr]
    if args.json:
        from referee.analysis.gameeval import analysis_of
        from referee.storage.browse import version_names
        from referee.web.moverows import move_rows
        from referee.web.replay import build_view

        view = build_view(detail, version_names(repo))
        stored = analysis_of((detail.record_json or {}).get("analysis"))
        summary["moves"] = move_rows(view, stored)
        print(json.dumps(summary))
        return 0
    outputs = summary.pop("output", [])
    # Names, reasons and a bot's own output are outside text: each line is shown cleaned.
    for key, value in summary.items():
        print(display(f"{key:>13}: {'-' if value is None else value}", 2000))
    for seat, text in enumerate(outputs):
        print(display(f"--- seat {seat} ({summary['seats'][seat]}) output ---", 1000))
        for line in text.rstrip().splitlines():
            print(display(line, 1000))
    return 0


def _export(args: argparse.Namespace) -> int:
    from referee.commands._arena import check_output
    from referee.storage import NotFoundError

    if problem := check_output("-o", args.output):
        return fail("game export", problem)
    repo = open_repo(args)
    try:
        detail = repo.get_game(args.id)
    except NotFoundError as exc:
        return fail("game export", exc)
    try:
        return _write_export(args, detail)
    except ValueError as exc:
        return fail("game export", exc)


def _write_export(args: argparse.Namespace, detail: GameDetail) -> int:
    from referee.commands._arena import write_out

    if args.form == "json":
        if detail.record_json is None:
            return fail("game export", "this game has no JSON record", 1)
        write_out(args.output, json.dumps(detail.record_json, indent=2) + "\n")
        return 0
    if detail.record_text is None:
        return fail("game export", "this game has no record", 1)
    if args.form == "pgn":
        write_out(args.output, detail.record_text)
        return 0
    from engine.records import read_record, replay
    from engine.render.svg import render_svg

    record = read_record(detail.record_text)
    try:
        state = replay(record, args.ply)
    except IndexError:
        return fail("game export", f"--ply {args.ply}: the game has {len(record.moves)} moves")
    write_out(args.output, render_svg(state))
    return 0
