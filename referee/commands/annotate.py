"""``referee annotate FILE`` (or ``--game ID``): mark each move ``?!``, ``?``, ``??`` or ``!``
by the reference search's evaluation drop, as comments in the record's own syntax."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from referee.commands._arena import add_db_option, fail
from referee.commands._common import Subparsers, stored_ref

if TYPE_CHECKING:
    from engine.records import GameRecord
    from referee.analysis.annotate import Judgement


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "annotate",
        help="mark inaccuracies, mistakes, blunders and only moves in a game record",
        description=(
            "Run the reference search on every position of a record and annotate each move "
            "with its evaluation drop (?! inaccuracy, ? mistake, ?? blunder, ! the only move "
            "that keeps a win); thresholds in docs/tools.md. A file is written in its own "
            "syntax (PGN-like or JSON); a stored game (--game) gets its record replaced."
        ),
    )
    parser.add_argument("file", nargs="?", metavar="FILE", help="a .pgn or .json record")
    parser.add_argument(
        "--game", dest="game_id", metavar="ID", type=stored_ref, help="a stored game instead"
    )
    parser.add_argument("-o", "--output", default="-", help="where to write (default stdout)")
    parser.add_argument(
        "--nodes", type=int, default=2000, help="search nodes per position (default 2000)"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no per-move lines on stderr")
    add_db_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from engine.errors import RecordError
    from engine.records import read_record, record_to_json, write_record
    from referee.analysis.annotate import annotate
    from referee.analysis.recordfile import is_json, issue_lines, read_record_file
    from referee.commands._arena import check_output, open_repo

    if (args.file is None) == (args.game_id is None):
        return fail("annotate", "give a record FILE or --game ID")
    if args.file is not None and (problem := check_output("-o", args.output)):
        return fail("annotate", problem)
    if not 1 <= args.nodes <= 10_000_000:
        return fail("annotate", "--nodes must be 1..10000000")
    repo = None
    try:
        if args.file is not None:
            record = read_record_file(args.file)
            as_json = is_json(args.file, "")
        else:
            from referee.storage import NotFoundError

            repo = open_repo(args)
            try:
                detail = repo.get_game(args.game_id)
            except NotFoundError as exc:
                return fail("annotate", exc)
            if detail.record_text is None:
                return fail("annotate", "this game has no record", 1)
            record = read_record(detail.record_text)
            as_json = False
    except OSError as exc:
        return fail("annotate", f"{args.file}: {exc.strerror or exc}")
    except RecordError as exc:
        for line in issue_lines(args.file or f"game {args.game_id}", exc):
            print(line, file=sys.stderr)
        return 2

    def show(j: Judgement) -> None:
        if not args.quiet and j.glyph:
            print(f"ply {j.ply}: {j.glyph} drop {j.drop:.1f} (best {j.best_move})", file=sys.stderr)

    try:
        annotated, judgements = annotate(record, nodes=args.nodes, progress=show)
    except ValueError as exc:
        return fail("annotate", exc)
    if repo is not None:
        data = record_to_json(annotated)
        if detail.record_json is not None and "referee" in detail.record_json:
            data["referee"] = detail.record_json["referee"]
        repo.set_game_record(args.game_id, write_record(annotated), data)
        marked = sum(1 for j in judgements if j.glyph)
        print(f"game {args.game_id}: {marked} of {len(judgements)} moves marked; record stored")
        return 0
    return _write(args.output, annotated, as_json)


def _write(output: str, annotated: GameRecord, as_json: bool) -> int:
    """Write the annotated record in its own syntax; one line if the file cannot be written."""
    from engine.records import record_to_json, write_record
    from referee.commands._arena import write_out

    text = json.dumps(record_to_json(annotated), indent=2) + "\n" if as_json else None
    try:
        write_out(output, text or write_record(annotated))
    except ValueError as exc:
        return fail("annotate", exc)
    return 0
