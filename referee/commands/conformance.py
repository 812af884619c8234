"""``referee conformance -- COMMAND...``: check a bot client in any language (the protocol)."""

from __future__ import annotations

import argparse
import json
import sys

from referee.commands._common import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "conformance",
        help="check that a bot program (any language) speaks the protocol correctly",
        description=(
            "Start COMMAND as a bot against a referee on a local port and check, one line per "
            "check, what a correct bot must do: the handshake and protocol version, a legal "
            "move for every request within its time, the end of the game, a reconnect with its "
            "session, a refused token, and messages it does not understand. The address and "
            "token are in TETROMINO_SERVER, TETROMINO_TOKEN_FILE and TETROMINO_TOKEN, and "
            "{server}, {token_file} and {token} in COMMAND are replaced. A failed check names "
            "the section of docs/protocol.md it comes from; the exit status is 1 on any failure."
        ),
    )
    parser.add_argument(
        "--move-time", type=float, default=5.0, metavar="S", help="seconds per move (default 5)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND...")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from referee.analysis.conformance import run_kit

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        print("referee conformance: give the bot's command after --", file=sys.stderr)
        return 2
    report = asyncio.run(run_kit(command, args.move_time))
    if args.json:
        print(json.dumps(report.as_json()))
    else:
        for check in report.checks:
            print(check.line())
        print("conformant" if report.ok else "not conformant")
    return 0 if report.ok else 1
