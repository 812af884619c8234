"""``python -m client_sdk play BOT [OPPONENT]``: local games on this machine, no server.

Each bot runs in its own process (:mod:`client_sdk._procbot`), so a crash, a hang or a memory
blow-up is a verdict of the game and the command goes on; every decision about the game is
the server's own adjudicator's (:mod:`client_sdk._match`), with the server's limits, flags,
verdict sentences and record formats. Nothing is sandboxed: the bots run as you.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from client_sdk._local import BUILTIN_OPPONENTS
from client_sdk._match import Limits, LocalMatch, Opening, as_dict, play_one
from client_sdk._procbot import BotStartError, ProcessBot
from engine.adjudication import TimeControl
from engine.adjudication.clock import DEFAULT_GAME_TIME_S, DEFAULT_GRACE_S

#: The referee's default memory per bot, MB.
DEFAULT_MEMORY_MB = 250.0
#: Said before the first game, every time: a local game is not the server's sandbox.
NOT_SANDBOXED = (
    "note: nothing is sandboxed locally: both bots run as you, with your files and network "
    "(the server runs uploaded bots in its sandbox)"
)
#: Environment variable the bot processes read ``--seed`` from (see :mod:`client_sdk._child`).
SEED_ENV = "TETROMINO_PLAY_SEED"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m client_sdk play",
        description="Play BOT against OPPONENT on this machine, judged as on the server "
        "(same adjudicator, limits, verdicts and records). " + NOT_SANDBOXED.removeprefix("note: "),
    )
    _add_game_options(parser)
    _add_limits(parser)
    parser.add_argument(
        "--openings",
        metavar="BOOK",
        help="start each pair of games from an opening of this book (a file, or a game name "
        "for the shipped book)",
    )
    parser.add_argument(
        "--seed", type=int, help="seed the choice of openings and each bot's random module"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="board and clocks each move")
    parser.add_argument("--record", metavar="FILE", help="write the records (.json: JSON)")
    parser.add_argument(
        "--lessons",
        metavar="FILE",
        help="write BOT's lessons from these games (its worst moves by the reference search; "
        "run them with: python -m client_sdk test FILE BOT)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    return parser


def _add_game_options(parser: argparse.ArgumentParser) -> None:
    """Who plays, which game, and how many games."""
    shortcuts = ", ".join(BUILTIN_OPPONENTS)
    parser.add_argument("bot", metavar="BOT", help="package dir[:Class], module[:Name] or file.py")
    parser.add_argument(
        "opponent",
        metavar="OPPONENT",
        nargs="?",
        default="random",
        help=f"a BOT, or one of the shipped bots: {shortcuts} (default: random)",
    )
    parser.add_argument("--game", default="tetress", metavar="NAME", help="default tetress")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game parameter, e.g. turn_limit=100 (repeatable)",
    )
    parser.add_argument(
        "--games", type=int, default=1, metavar="N", help="play N games, colours alternating"
    )


def _add_limits(parser: argparse.ArgumentParser) -> None:
    """The clocks and the memory limit each bot plays under."""
    parser.add_argument(
        "-t",
        "--time",
        type=float,
        default=DEFAULT_GAME_TIME_S,
        metavar="S",
        help="seconds per bot per game (0: none; default %(default)g)",
    )
    parser.add_argument(
        "--move-time", type=float, default=0.0, metavar="S", help="seconds per move (0: none)"
    )
    parser.add_argument(
        "-s",
        "--memory",
        type=float,
        default=DEFAULT_MEMORY_MB,
        metavar="MB",
        help="resident memory per bot, where this platform lets it be measured (0: none; "
        "default %(default)g)",
    )


def play_main(argv: Sequence[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    if min(args.time, args.move_time, args.memory) < 0:
        parser.error("-t, --move-time and -s must be 0 or more")
    control = TimeControl(
        game_time_s=args.time, move_time_s=args.move_time, grace_s=DEFAULT_GRACE_S
    )
    limits = Limits(control, int(args.memory * 1024 * 1024))
    try:
        params = _params(args.param)
        _check_game(args.game, params)
        openings = _openings(args.openings, args.game, args.games, args.seed)
        _check_record_path(args.record)
        _check_record_path(args.lessons)
    except ValueError as exc:
        print(f"python -m client_sdk play: {exc}", file=sys.stderr)
        return 2
    print(NOT_SANDBOXED, file=sys.stderr)
    bot = BUILTIN_OPPONENTS.get(args.bot, args.bot)
    opponent = BUILTIN_OPPONENTS.get(args.opponent, args.opponent)
    if args.seed is not None:
        os.environ[SEED_ENV] = str(args.seed)
    show = None if args.json or not args.verbose else _show
    try:
        games = _play_all(
            (bot, opponent), args.games, (args.game, params), limits, openings,
            not args.json, show,
        )  # fmt: skip
    except BotStartError as exc:
        print(f"python -m client_sdk play: {exc}", file=sys.stderr)
        return 2
    if args.record:
        _write_records(args.record, games)
    if args.lessons:
        from engine.records.lessons import Limits as LessonLimits

        _write_lessons(
            args.lessons, games, bot, LessonLimits(args.time, args.move_time, args.memory)
        )
    _report(games, bot, args.json)
    return 0


def _play_all(
    specs: tuple[str, str],
    count: int,
    game: tuple[str, dict[str, int]],
    limits: Limits,
    openings: list[Opening],
    echo: bool,
    show: Callable[[str], None] | None,
) -> list[LocalMatch]:
    """``count`` games of ``specs`` (BOT, OPPONENT), BOT first in the odd-numbered ones; each
    line of the bots' stderr is shown with their label when ``echo``. ``game``: its name and
    parameters."""
    bot, opponent = specs
    ours = ProcessBot(bot, label="bot", echo=echo)
    try:
        theirs = ProcessBot(opponent, label="opponent", echo=echo)
    except BotStartError:
        ours.close()
        raise
    games: list[LocalMatch] = []
    try:
        for index in range(count):
            seated = [ours, theirs] if index % 2 == 0 else [theirs, ours]
            names = (bot, opponent) if index % 2 == 0 else (opponent, bot)
            played = play_one(
                seated,
                (names[0], names[1]),
                game=game[0],
                params=game[1],
                limits=limits,
                opening=openings[index // 2],
                game_id=f"local-{index + 1}",
                show=show,
            )
            games.append(played)
            if echo:
                print(_line(index + 1, played), flush=True)
            # A bot killed for its verdict (time, memory, crash) starts afresh for the next game.
            if ours.proc.poll() is not None and index + 1 < count:
                ours = ProcessBot(bot, label="bot", echo=echo)
            if theirs.proc.poll() is not None and index + 1 < count:
                theirs = ProcessBot(opponent, label="opponent", echo=echo)
    finally:
        ours.close()
        theirs.close()
    return games


def _show(picture: str) -> None:
    print(picture, flush=True)


def _params(items: Sequence[str]) -> dict[str, int]:
    """``--param KEY=VALUE`` items; ``ValueError`` naming a malformed one."""
    params: dict[str, int] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip().lstrip("-").isdigit():
            raise ValueError(f"--param expects KEY=INTEGER, got {item!r}")
        params[key.strip()] = int(value)
    return params


def _check_game(game: str, params: dict[str, int]) -> None:
    """The game exists and takes these parameters; ``ValueError`` with one line otherwise."""
    from engine.errors import UnknownGameError
    from engine.registry import load_game

    try:
        load_game(game, **params)
    except UnknownGameError as exc:
        raise ValueError(str(exc).strip("\"'")) from None
    except TypeError as exc:
        raise ValueError(f"--param: {exc}") from None


def _openings(book_name: str | None, game: str, count: int, seed: int | None) -> list[Opening]:
    """The opening of each pair of games (none without a book); ``ValueError`` for a bad book."""
    pairs = (count + 1) // 2
    if not book_name:
        return [Opening()] * pairs
    from engine.records.openings import load_book, opening_labels
    from engine.registry import load_game

    book = load_book(book_name)
    book.check_game(load_game(game))
    rng = random.Random(seed)
    chosen = [rng.choice(book.openings) for _ in range(pairs)]
    return [
        Opening(
            o.moves, tuple((k[:1].upper() + k[1:], v) for k, v in opening_labels(o, book).items())
        )
        for o in chosen
    ]


def _check_record_path(path: str | None) -> None:
    """Before any game: the record's folder exists and the path is not a folder."""
    if not path:
        return
    target = Path(path)
    if target.is_dir():
        raise ValueError(f"--record {path}: is a folder, not a file")
    if not target.parent.resolve().is_dir():
        raise ValueError(f"--record {path}: no such folder {target.parent}")


def _write_records(path: str, games: list[LocalMatch]) -> None:
    from engine.records import write_record
    from engine.records.jsonform import write_json, write_json_lines
    from engine.records.pgn import write_records

    records = [g.record for g in games]
    if path.endswith(".json"):
        text = write_json(records[0], indent=2) if len(records) == 1 else write_json_lines(records)
    else:
        text = write_record(records[0]) if len(records) == 1 else write_records(records)
    Path(path).write_text(text, encoding="utf-8")


def _write_lessons(path: str, games: list[LocalMatch], bot: str, limits: Any) -> None:
    """BOT's lessons from ``games`` (BOT sat first in the odd-numbered ones), to be tested
    under ``limits`` (the games' own)."""
    from client_sdk._lessons_cli import DEFAULT_NODES
    from client_sdk.reference.lessons import lessons_from_record
    from engine.records.lessons import LessonsFile, dedupe, write_lessons

    found = []
    for index, game in enumerate(games):
        found += lessons_from_record(
            game.record, index % 2, nodes=DEFAULT_NODES, bot=bot, game_id=game.game_id
        )
    kept = dedupe(found)
    Path(path).write_text(write_lessons(LessonsFile(tuple(kept), bot=bot, limits=limits)), "utf-8")
    print(f"{len(kept)} lessons written to {path}", file=sys.stderr)


def _line(number: int, game: LocalMatch) -> str:
    end = game.end
    names = game.seat_names
    who = f"{names[0]} {game.names[0]} vs {names[1]} {game.names[1]}"
    head = "draw" if end.winner is None else f"{names[end.winner]} wins"
    return (
        f"game {number}: {who}: {end.result()} {head} after {game.plies} moves "
        f"({end.verdict})\n  {end.reason}"
    )


def _report(games: list[LocalMatch], bot: str, as_json: bool) -> None:
    # BOT sits first in the odd-numbered games (index 0, 2, ...), second in the others.
    score = sum(g.end.score(i % 2) for i, g in enumerate(games))
    won = sum(1 for i, g in enumerate(games) if g.end.winner == i % 2)
    drawn = sum(1 for g in games if g.end.winner is None)
    summary: dict[str, Any] = {
        "bot": bot,
        "games": [as_dict(g) for g in games],
        "won": won,
        "drawn": drawn,
        "lost": len(games) - won - drawn,
        "score": score,
        "sandboxed": False,
    }
    if as_json:
        print(json.dumps(summary), flush=True)
    else:
        print(f"{bot}: {won} won, {drawn} drawn, {summary['lost']} lost of {len(games)}")
