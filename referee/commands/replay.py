"""``referee replay FILE``: check a game record, print its final position, step or render it."""

from __future__ import annotations

import argparse
import sys

from referee.commands._common import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="check a game record (PGN-like or JSON) and show its positions",
        description=(
            "Read a record and replay every move against the rules. Each problem is printed "
            "as FILE:LINE:COLUMN: message, one per line, and the exit code is 2. A good "
            "record prints its tags and the final position (or the one after --ply N; --all for "
            "every position in turn)."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="a .pgn (PGN-like) or .json record")
    parser.add_argument(
        "--ply", type=int, help="the position after N moves (negative: from the end)"
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="every position in turn, each after its move (up to --ply N when given)",
    )
    parser.add_argument(
        "--board",
        action="store_true",
        help="the board (shown by default: the final one, or the one after --ply N)",
    )
    parser.add_argument("--svg", metavar="OUT", help="write the position as SVG (- for stdout)")
    parser.add_argument("--color", action="store_true", help="ANSI colours on the board")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from engine.errors import RecordError
    from engine.records import positions, replay
    from referee.analysis.recordfile import issue_lines, read_record_file
    from referee.commands._arena import check_output
    from referee.text.names import display

    if args.svg and (problem := check_output("--svg", args.svg)):
        print(f"referee replay: {problem}", file=sys.stderr)
        return 2
    try:
        record = read_record_file(args.file)
    except OSError as exc:
        print(f"referee replay: {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except RecordError as exc:
        for line in issue_lines(args.file, exc):
            print(line, file=sys.stderr)
        return 2
    try:
        state = replay(record, args.ply)
    except IndexError as exc:
        print(f"referee replay: --ply {args.ply}: {exc}", file=sys.stderr)
        return 2
    if args.svg:
        from engine.render.svg import render_svg
        from referee.commands._arena import write_out

        try:
            write_out(args.svg, render_svg(state))
        except ValueError as exc:
            print(f"referee replay: {exc}", file=sys.stderr)
            return 2
        if args.svg == "-":
            return 0
    # A record file may come from anywhere: its names and sentences are shown cleaned.
    players = " vs ".join(record.players)
    head = f"{record.game}: {players}, {record.result} after {record.plies} moves"
    print(display(head + (f" ({record.termination})" if record.termination else ""), 1000))
    if record.reason:
        print(display(record.reason, 1000))
    total = record.plies
    target = total if args.ply is None else args.ply if args.ply >= 0 else total + args.ply
    if args.all:
        for index, position in enumerate(positions(record)):
            if index > target:
                break
            if index:
                move = record.moves[index - 1]
                print(f"\n{index}. {display(move.san + (move.annotation or ''))}")
            print(position.render(color=args.color))
        return 0
    print(f"position after {target} moves:")
    print(state.render(color=args.color))
    print(state.to_string())
    return 0
