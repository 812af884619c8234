"""``python -m client_sdk reproduce``: the command around :mod:`client_sdk._reproduce`.

::

    python -m client_sdk reproduce PACK BOT [--pdb] [--until PLY] [--json]
    python -m client_sdk reproduce GAME_ID BOT --server HOST --token-file F   # your pack
    python -m client_sdk reproduce PACK -- COMMAND...     # a bot in any language (gRPC)

After ``--``, the bot is a command (a C++ or JavaScript bot, clients/): it is started with
``TETROMINO_SERVER`` and ``TETROMINO_TOKEN`` set and replayed over gRPC by
:mod:`client_sdk._replay_command`.

Exit status: 0 when the bot reaches the recorded verdict at the recorded ply, 1 when it
does not, 2 when the replay could not run (no such pack, a pack that is not one, a bot that
does not load).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from dataclasses import asdict

from client_sdk._pack import FailurePackError, Pack, load_pack
from client_sdk._procbot import BotStartError
from client_sdk._reproduce import CannotReplay, Replayed, Replayer, hold

PROG = "python -m client_sdk reproduce"


def _parser() -> argparse.ArgumentParser:
    from client_sdk._options import add_connection_options

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Replay a failure pack against a bot on this machine and say whether it "
        "fails the same way.",
    )
    parser.add_argument(
        "pack",
        metavar="PACK",
        help="a failure pack file, or with --server the id of one of your games",
    )
    parser.add_argument(
        "bot",
        metavar="BOT",
        nargs="?",
        help="the bot to run (as for python -m client_sdk); or, after --, a command",
    )
    parser.add_argument(
        "--pdb",
        action="store_true",
        help="stop in the bot's code at the failing move (or at --until's ply), on this terminal",
    )
    parser.add_argument(
        "--until",
        type=int,
        metavar="PLY",
        help="replay only the requests before PLY, then leave the bot running for a debugger",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_connection_options(parser, required=False)
    return parser


def reproduce_main(argv: Sequence[str]) -> int:
    parser = _parser()
    argv = list(argv)
    command = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    if bool(command) == bool(args.bot):
        parser.error("give the bot as BOT, or as a command after --, not both nor neither")
    try:
        pack = _pack(args)
        debug_ply = None
        if args.pdb:
            debug_ply = args.until if args.until is not None else pack.fault_ply
        until = None if args.pdb else args.until
        bot = shlex.join(command) if command else args.bot
        replayer = Replayer(pack, bot, debug_ply=debug_ply, until=until, command=bool(command))
    except (FailurePackError, CannotReplay, BotStartError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    try:
        replayed = replayer.run()
    except CannotReplay as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    if replayer.holding:
        hold(replayer.bot, replayed.ply or 0)
        return 0
    return _say(pack, replayed, as_json=args.json)


def _pack(args: argparse.Namespace) -> Pack:
    if not args.server:
        return load_pack(args.pack)
    from client_sdk._packs_remote import fetch_pack

    return fetch_pack(args, args.pack)


def _say(pack: Pack, replayed: Replayed, *, as_json: bool) -> int:
    match = replayed.matches(pack)
    diverged = replayed.diverged
    if as_json:
        print(
            json.dumps(
                {
                    "game_id": pack.raw["game_id"],
                    "seat": pack.seat_name,
                    "recorded": {
                        "verdict": pack.verdict,
                        "reason": pack.reason,
                        "ply": pack.fault_ply,
                    },
                    "reproduced": {
                        "verdict": None if replayed.verdict is None else str(replayed.verdict),
                        "reason": replayed.reason,
                        "ply": replayed.ply,
                    },
                    "answers": replayed.answers,
                    "diverged": None if diverged is None else asdict(diverged),
                    "match": match,
                }
            ),
            flush=True,
        )
        return 0 if match else 1
    where = "" if pack.fault_ply is None else f" at ply {pack.fault_ply}"
    print(f"recorded ({pack.verdict}{where}): {pack.reason}")
    if diverged is not None:
        print(f"here: {replayed.reason}")
        print(
            f"the replay stopped there, after {replayed.answers} answers like the game's: the "
            "bot does not play as it did (seed its randomness from client_sdk.game_seed(), "
            "or it reads something that changed)"
        )
    elif replayed.verdict is None:
        print(f"here: no fault ({replayed.reason})")
    else:
        print(f"here ({replayed.verdict} at ply {replayed.ply}): {replayed.reason}")
    print("match: the same verdict at the same ply" if match else "no match")
    return 0 if match else 1
