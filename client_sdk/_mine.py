"""``python -m client_sdk mine``: your versions, your games and their records, and your own
bot's captured output, from the referee's Submissions service (authenticated by your token).

::

    python -m client_sdk mine --server HOST:PORT --token T               # versions and games
    python -m client_sdk mine versions ...                                # versions only
    python -m client_sdk mine games ...                                   # games only
    python -m client_sdk mine game GAME_ID ... [-o game.pgn]              # one game's record
    python -m client_sdk mine output GAME_ID ... [--seat N]               # your bot's output
    python -m client_sdk mine failures ... [--all]                        # new (or all) failures

A student sees only their own; asking for another player's output is refused with a sentence
(exit status 1). The instructor's token sees everyone's (``--player NAME``, ``--seat N``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc

from client_sdk._options import TokenError
from client_sdk._submit import bearer, channel, common_parser, reason, token
from client_sdk._tls import TlsSetupError

WHAT = ("all", "versions", "games", "failures", "game", "output")


def mine_main(argv: Sequence[str]) -> int:
    from google.protobuf.json_format import MessageToDict

    parser = common_parser("mine", "Your versions and games, a game's record, your bot's output.")
    parser.add_argument(
        "what",
        nargs="?",
        default="all",
        choices=WHAT,
        help="versions, games, failures (your bot's new failures since you last looked, each "
        "with the command to reproduce it), game GAME_ID (its record), output GAME_ID (your "
        "bot's output); default: versions, games and new failures",
    )
    parser.add_argument("game_id", nargs="?", metavar="GAME_ID", help="for game and output")
    parser.add_argument("-o", "--out", metavar="FILE", help="game: write the record to FILE")
    parser.add_argument("--seat", type=int, help="output: this seat's (default: your bot's)")
    parser.add_argument("--player", default="", help="another player's (instructor only)")
    parser.add_argument(
        "--all",
        action="store_true",
        help="failures: every failure of your bots again, not only the new ones",
    )
    args = parser.parse_args(argv)
    if args.what in ("game", "output") and not args.game_id:
        parser.error(f"mine {args.what} needs a GAME_ID")
    try:
        data = _call(args)
    except (TlsSetupError, TokenError) as exc:
        print(f"python -m client_sdk mine: {exc}", file=sys.stderr)
        return 2
    except grpc.RpcError as exc:
        print(f"python -m client_sdk mine: {reason(args, exc)}", file=sys.stderr)
        return 1
    if args.what == "game" and args.out:
        Path(args.out).write_text(data.record_text, encoding="utf-8")
    if args.json:
        print(json.dumps(MessageToDict(data, preserving_proto_field_name=True)))
    elif args.what == "game":
        if args.out:
            print(f"game {data.game.game_id}: record written to {args.out}")
        else:
            print(data.record_text.rstrip())
    elif args.what == "output":
        _print_output(data)
    else:
        _print_mine(data, args.what)
        if args.what in ("all", "failures"):
            _print_failures(args, data)
    return 0


def _print_failures(args: Any, data: Any) -> None:
    from client_sdk._failures_seen import every_failure, new_failures, print_failures
    from client_sdk._options import login_options

    if args.all:
        failures = every_failure(data.games)
    else:
        failures = new_failures(args.server, data.player, data.games)
    print_failures(failures, args.server, login_options(args), new=not args.all)


def _call(args: Any) -> Any:
    from client_sdk.proto import submissions_pb2 as spb
    from client_sdk.proto import submissions_pb2_grpc

    metadata = bearer(token(args))
    with channel(args) as chan:
        stub = submissions_pb2_grpc.SubmissionsStub(chan)
        if args.what == "game":
            return stub.GetMyGame(spb.GetMyGameRequest(game_id=args.game_id), metadata=metadata)
        if args.what == "output":
            request = spb.GetMyOutputRequest(game_id=args.game_id)
            if args.seat is not None:
                request.seat = args.seat
            return stub.GetMyOutput(request, metadata=metadata)
        return stub.ListMine(spb.ListMineRequest(player=args.player), metadata=metadata)


def _print_mine(data: Any, what: str) -> None:
    if what in ("all", "versions"):
        print(f"versions of {data.player}:")
        for v in data.versions:
            star = " *plays*" if v.playing else ""
            print(f"  {v.bot}@{v.version}  {v.status}{star}  {v.uploaded_at}  {v.reason}")
            queued = queue_line(v)
            if queued:
                print(f"      {queued}")
            if v.validation_game_id:
                print(f"      validation game {v.validation_game_id}")
    if what in ("all", "games"):
        print("games (a record: mine game GAME_ID; your bot's output: mine output GAME_ID):")
        for g in data.games:
            where = f" [{g.tournament}]" if g.tournament else ""
            kind = " (validation)" if g.kind == "validation" else ""
            seats = " vs ".join(g.seats)
            print(
                f"  {g.game_id}{where}{kind}  {g.game}  {seats}  {g.result} ({g.verdict})  "
                f"you: {seat_name(g.game, g.my_seat)}"
            )


def queue_line(v: Any) -> str:
    """Where a validating version's full games stand (a SubmissionView's queue fields; ""
    when it is not in the queue, or the server is older than those fields)."""
    if v.queue_state == "running":
        return "full validation games: running now"
    if v.queue_state != "waiting":
        return ""
    wait = (
        f", about {v.wait_estimate_s:.0f} s"
        if v.HasField("wait_estimate_s")
        else " (no estimate yet)"
    )
    return f"full validation games: place {v.queue_place} in the queue{wait}"


def seat_name(game: str, seat: int) -> str:
    """``RED``/``BLUE`` (``CHOOSER``/``PLACER`` in ATT): how the game names the seat."""
    from engine.errors import UnknownGameError
    from engine.registry import load_game

    try:
        names = load_game(game).seat_names
    except UnknownGameError:
        return f"seat {seat}"
    return names[seat] if 0 <= seat < len(names) else f"seat {seat}"


def _print_output(data: Any) -> None:
    from engine.errors import EngineError
    from engine.records import read_record

    try:
        game = read_record(data.record, verify=False).game
    except (EngineError, ValueError):
        game = ""
    print(f"game {data.game_id}, {seat_name(game, data.seat)} ({data.bot}):")
    if data.remote:
        print(
            "  this bot ran on your own machine (it connected over the network): its output "
            "is not kept by the referee; it stayed where the bot ran (its terminal or log)"
        )
    else:
        print(data.output.rstrip() or "  (it printed nothing)")
