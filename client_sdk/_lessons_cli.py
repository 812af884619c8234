"""``python -m client_sdk lessons``: the positions your bot got wrong, as a lessons file.

::

    python -m client_sdk lessons --server HOST --token-file T -o lessons.jsonl   # from the server
    python -m client_sdk lessons game1.pgn game2.json --bot my_bot -o lessons.jsonl  # no server

From the server: the lessons of your own bots' stored games (``--bot``, ``--version`` to pick;
the instructor may name ``--player``). From records (as ``python -m client_sdk play --record``
writes them, PGN-like or JSON, one game or many): the moves of the seats ``--bot`` played,
judged here by the reference search (the same judgement as the server's game pages). Run the
lessons with ``python -m client_sdk test LESSONS BOT``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from client_sdk._errors import SdkError
from client_sdk.reference.judge import DEFAULT_NODES as JUDGE_NODES

if TYPE_CHECKING:
    from engine.records.lessons import Limits

#: The reference search's nodes per position: ``referee annotate``'s. The server's game pages
#: judge at 500 to analyse every game in seconds, but a judgement that shallow (depth 1) often
#: prefers moves a deeper search rejects, so its lessons do not tell a stronger bot from a
#: weaker one (measured: the reference levels 1 and 3 solved 2 of 10 each at 500 nodes, 9 and
#: 20 of 25 at 3000).
DEFAULT_NODES = JUDGE_NODES
#: A ``TimeControl`` tag's game time (its leading seconds) and move time.
_GAME_TIME = re.compile(r"\s*(\d+(?:\.\d+)?)")
_MOVE_TIME = re.compile(r"move(?:<=|=)(\d+(?:\.\d+)?)")


def _parser() -> argparse.ArgumentParser:
    from client_sdk._options import add_connection_options

    parser = argparse.ArgumentParser(
        prog="python -m client_sdk lessons",
        description="Lessons (the positions where a bot's move lost the most by the reference "
        "evaluation) from the server, or made here from game records.",
    )
    parser.add_argument(
        "records", nargs="*", metavar="RECORD", help="game records (.pgn or .json); no server"
    )
    parser.add_argument(
        "--bot",
        default="",
        help="records: whose mistakes (the player name in the record, e.g. the BOT given to "
        "play); server: only this bot's lessons",
    )
    parser.add_argument("-o", "--out", metavar="FILE", help="write the lessons file here")
    parser.add_argument("--version", default="", help="server: only this version's lessons")
    parser.add_argument("--player", default="", help="server: a player's (instructor only)")
    parser.add_argument(
        "--nodes",
        type=int,
        default=DEFAULT_NODES,
        help="records: reference search nodes per position (default %(default)s)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    add_connection_options(parser, required=False)
    return parser


def lessons_main(argv: Sequence[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if bool(args.records) == bool(args.server):
        parser.error("give game RECORDs (made here) or --server (fetched), not both")
    if args.records and not args.bot:
        parser.error("with RECORDs, --bot names whose mistakes to collect")
    if not 1 <= args.nodes <= 1_000_000:
        parser.error("--nodes must be 1..1000000")
    try:
        text, counts = _from_server(args) if args.server else _from_records(args)
    except LessonsFailed as exc:
        print(f"python -m client_sdk lessons: {exc}", file=sys.stderr)
        return exc.status
    from engine.records.lessons import read_lessons

    found = read_lessons(text, verify=False).lessons
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    if args.json:
        print(json.dumps({"lessons": len(found), "out": args.out or None, **counts}))
    elif args.out:
        pending = counts.get("pending")
        more = f" ({pending} games still being analysed: ask again later)" if pending else ""
        print(f"{len(found)} lessons from {counts['games']} games written to {args.out}{more}")
    else:
        print(text, end="")
    return 0


class LessonsFailed(SdkError):
    """The lessons could not be made or fetched; the message says why."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def _from_records(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    from client_sdk._local import BUILTIN_OPPONENTS
    from client_sdk.reference.lessons import lessons_from_record
    from engine.records.lessons import LessonsFile, Limits, dedupe, write_lessons

    names = {args.bot, BUILTIN_OPPONENTS.get(args.bot, args.bot)}
    found = []
    games = 0
    controls = set()
    for path in args.records:
        for number, record in enumerate(read_records_file(path), 1):
            tags = dict(record.extra_tags)
            seats = [s for s, name in enumerate(record.players) if name in names]
            if seats:
                games += 1
                controls.add((record.time_control, tags.get("MemoryLimitMB")))
            game_id = tags.get("GameId") or f"{Path(path).name}#{number}"
            for seat in seats:
                found += lessons_from_record(
                    record,
                    seat,
                    nodes=args.nodes,
                    bot=args.bot,
                    version=seat_version(record, seat),
                    game_id=game_id,
                )
    if not games:
        raise LessonsFailed(f"no game in the records was played by {args.bot!r}", 2)
    limits = record_limits(*controls.pop()) if len(controls) == 1 else Limits()
    text = write_lessons(LessonsFile(tuple(dedupe(found)), bot=args.bot, limits=limits))
    return text, {"games": games}


def seat_version(record: Any, seat: int) -> str:
    """The bot version that sat in ``seat``, from the record's ``<Seat>Version`` tag (the
    referee's records have it); empty when the record does not say."""
    from engine.registry import load_game

    name = load_game(record.game, **record.params).seat_names[seat]
    found = str(dict(record.extra_tags).get(f"{name.capitalize()}Version", ""))
    return "" if found == "?" else found


def record_limits(time_control: str | None, memory_mb: str | None = None) -> Limits:
    """The limits a lessons file gives its positions, from the games' ``TimeControl`` tag as
    ``play`` (``180s wall move<=2s (grace 0.25s)``) or the referee (``180+1 move=2
    clock=cpu``) write it: its game and move time, and their ``MemoryLimitMB`` tag (0: none);
    the defaults where they say nothing."""
    from engine.records.lessons import Limits

    found = Limits()
    try:
        memory = float(memory_mb) if memory_mb is not None else None
    except ValueError:
        memory = None
    if memory is not None and 0 <= memory < float("inf"):
        found = replace(found, memory_mb=memory)
    if not time_control:
        return found
    game = _GAME_TIME.match(time_control)
    if game:
        found = replace(found, game_time_s=float(game.group(1)))
    elif time_control.startswith(("unlimited", "-")):
        found = replace(found, game_time_s=0.0)
    move = _MOVE_TIME.search(time_control)
    if move:
        found = replace(found, move_time_s=float(move.group(1)))
    return found


def read_records_file(path: str) -> list[Any]:
    """The records in a file (PGN-like text, a JSON record or JSON Lines)."""
    from engine.errors import RecordError
    from engine.records import read_json, read_records
    from engine.records.jsonform import read_json_lines

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LessonsFailed(f"cannot read {path}: {exc}", 2) from None
    try:
        if text.lstrip().startswith("{"):
            lines = [line for line in text.splitlines() if line.strip()]
            if len(lines) > 1 and all(line.lstrip().startswith("{") for line in lines):
                try:
                    return list(read_json_lines(text))
                except RecordError:
                    pass
            return [read_json(text)]
        return list(read_records(text))
    except RecordError as exc:
        first = exc.issues[0] if exc.issues else "unreadable"
        raise LessonsFailed(f"{path}: not a game record ({first})", 2) from None


def _from_server(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    import grpc

    from client_sdk._options import TokenError
    from client_sdk._submit import bearer, channel, reason, token
    from client_sdk._tls import TlsSetupError
    from client_sdk.proto import submissions_pb2 as spb
    from client_sdk.proto import submissions_pb2_grpc

    request = spb.GetMyLessonsRequest(bot=args.bot, version=args.version, player=args.player)
    try:
        metadata = bearer(token(args))
        with channel(args) as chan:
            reply = submissions_pb2_grpc.SubmissionsStub(chan).GetMyLessons(
                request, metadata=metadata
            )
    except (TlsSetupError, TokenError) as exc:
        raise LessonsFailed(str(exc), 2) from None
    except grpc.RpcError as exc:
        raise LessonsFailed(reason(args, exc)) from None
    return reply.lessons, {"games": reply.games, "pending": reply.pending}
