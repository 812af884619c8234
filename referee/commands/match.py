"""``referee match RED BLUE``: one game between two bots launched on this machine."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from referee.commands._common import (
    Subparsers,
    add_game_options,
    add_limit_options,
    add_log_options,
    add_sandbox_option,
    announce_isolation,
    game_params,
    load_game_option,
    time_control,
    verdict_label,
)
from referee.commands._display import MoveDisplay

if TYPE_CHECKING:
    from rich.console import Console

    from engine.game import Game
    from referee.match.clock import TimeControl
    from referee.match.report import GameReport, GameSummaryJson
    from referee.play.local import MatchResult
    from referee.sandbox.isolation import Isolation
    from referee.sandbox.launch import BotSpec


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "match",
        help="play one game between two bots",
        description=(
            "Play one game between two bots, each a course-style package directory, an SDK "
            "module (e.g. client_sdk.examples.random_bot), a Python file, or a shell command "
            "(given {server} and {token}; prefix cmd: to force). The first bot takes the first "
            "seat (RED in Tetress, CHOOSER in ATT)."
        ),
    )
    parser.add_argument("first", metavar="RED", help="the bot in the first seat")
    parser.add_argument("second", metavar="BLUE", help="the bot in the second seat")
    add_game_options(parser)
    add_limit_options(parser)
    parser.add_argument("--record", metavar="FILE", help="write the game record (.json: JSON)")
    parser.add_argument(
        "-v",
        "--verbose",
        type=_verbosity,
        nargs="?",
        const=1,
        default=0,
        metavar="N",
        help="0: the result only (default); 1 (-v): the board, clocks and each bot's own "
        "output every move; 2: also the referee's log; 3: also its debug log",
    )
    parser.add_argument(
        "--color",
        action=argparse.BooleanOptionalAction,
        help="colour the -v board (default: when the output is a terminal)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    _add_opening_options(parser)
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds a bot may take to connect (default %(default)g)",
    )
    parser.add_argument(
        "--reconnect-window",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds a bot whose connection dropped may take to come back (default %(default)g)",
    )
    parser.add_argument(
        "--shutdown-grace",
        type=float,
        default=5.0,
        metavar="S",
        help="on SIGTERM, seconds the game may take to finish before it is recorded as aborted "
        "(default %(default)g)",
    )
    add_sandbox_option(parser)
    add_log_options(parser, "WARNING")
    parser.set_defaults(func=run)


def _verbosity(text: str) -> int:
    if text not in ("0", "1", "2", "3"):
        raise argparse.ArgumentTypeError(f"verbosity is 0, 1, 2 or 3, not {text!r}")
    return int(text)


def course_argv(argv: list[str]) -> list[str]:
    """Spell the course's verbosity flags so the parser reads them: a bare ``-v`` is level 1
    (``-v A B`` must not take ``A`` as the level) and ``-vv``/``-vvv`` are levels 2 and 3."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        following = argv[i + 1] if i + 1 < len(argv) else ""
        if arg in ("-v", "--verbose") and not following.lstrip("-").isdigit():
            out.append("--verbose=1")
        elif arg in ("-vv", "-vvv"):
            out.append(f"--verbose={len(arg) - 1}")
        else:
            out.append(arg)
    return out


def run(args: argparse.Namespace) -> int:
    import asyncio

    from rich.console import Console

    from engine.errors import UnknownGameError
    from referee.sandbox.launch import parse_bot_spec
    from referee.telemetry import logs as referee_logging

    # A SIGTERM before the game starts (during the load check, say) is kept, and the game is
    # then stopped as one that came during it; without this it would kill the command mid-check.
    early = _EarlyTerm()
    signal.signal(signal.SIGTERM, early.note)
    level = {2: "INFO", 3: "DEBUG"}.get(args.verbose, args.log_level)
    referee_logging.configure(args.log_format, level)
    # With --json, stdout carries the one JSON object and nothing else.
    stream = sys.stderr if args.json else sys.stdout
    display = Console(stderr=args.json, highlight=False, soft_wrap=not stream.isatty())
    try:
        game = load_game_option(args.game, game_params(args))
        specs = [parse_bot_spec(args.first), parse_bot_spec(args.second)]
        control = time_control(args)
        _check_record_path(args.record)
    except (UnknownGameError, ValueError, TypeError) as exc:
        return _not_started(args, str(exc))
    isolation = announce_isolation(args.no_sandbox, "referee match")
    ready = _ready(args, game, specs, isolation)
    if isinstance(ready, int):
        return ready
    observer = MoveDisplay(display, game.seat_names, args.color) if args.verbose else None

    try:
        result = asyncio.run(_play(args, game, specs, control, observer, ready, isolation, early))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("referee match: interrupted; every bot was stopped", file=sys.stderr)
        return 130
    except (OSError, ValueError) as exc:  # a bot could not be launched at all
        reason = f"the game could not start: {exc}"
        return _not_started(args, reason, game, specs, sandbox=isolation.value)
    return _report(args, result, specs, game, display)


class _EarlyTerm:
    """Whether a SIGTERM came before the game's own handler was installed."""

    def __init__(self) -> None:
        self.seen = False

    def note(self, signum: int, frame: object) -> None:
        self.seen = True


async def _play(
    args: argparse.Namespace,
    game: Game[Any],
    specs: Sequence[BotSpec],
    control: TimeControl,
    observer: MoveDisplay | None,
    ready: tuple[tuple[str, ...], dict[str, str]],
    isolation: Isolation,
    early: _EarlyTerm,
) -> MatchResult:
    """Play the game. SIGTERM: the game may finish within the grace period, else it is recorded
    as aborted; every bot is stopped either way. Ctrl-C cancels at once (bots cleaned up)."""
    import asyncio

    from referee.play.local import play_match

    shutdown = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, shutdown.set)
    if early.seen:
        shutdown.set()
    opening, labels = ready
    return await play_match(
        specs,
        game,
        time_control=control,
        memory_mb=args.memory or None,
        observer=observer,
        connect_timeout=args.connect_timeout,
        resume_window=args.reconnect_window,
        shutdown=shutdown,
        shutdown_grace=args.shutdown_grace,
        on_launched=observer.attach if observer is not None else None,
        labels=labels,
        opening=opening,
        isolation=isolation,
    )


def _ready(
    args: argparse.Namespace, game: Game[Any], specs: Sequence[BotSpec], isolation: Isolation
) -> tuple[tuple[str, ...], dict[str, str]] | int:
    """The opening and its labels once both bots load; else the exit status of a game that
    could not start (said by :func:`_not_started`)."""
    try:
        failed = _load_failure(specs, isolation)
        if failed is not None:
            return _not_started(args, failed[1], game, specs, failed[0], isolation.value)
        return _opening(args, game)
    except ValueError as exc:
        return _not_started(args, str(exc), game, specs, sandbox=isolation.value)


def _load_failure(specs: Sequence[BotSpec], isolation: Isolation) -> tuple[int, str] | None:
    """The seat of the first bot that does not load (checked as it will be launched) and the
    line saying why, or ``None``."""
    import asyncio

    from referee.match.loadcheck import check_all, refusal

    reasons = asyncio.run(check_all(specs, isolation=isolation))
    for seat, reason in enumerate(reasons):
        if reason is not None:
            line = refusal([specs[seat]], [reason])
            return seat, line or reason
    return None


def _not_started(
    args: argparse.Namespace,
    reason: str,
    game: Game[Any] | None = None,
    specs: Sequence[BotSpec] = (),
    offender: int | None = None,
    sandbox: str | None = None,
) -> int:
    """The game could not start: one line on stderr and, with ``--json``, one object saying
    so on stdout (verdict ``aborted``, no moves); exit status 2."""
    print(f"referee match: {reason}", file=sys.stderr)
    if args.json:
        names = list(game.seat_names) if game is not None else []
        seats = {
            name: {"spec": spec.value, "loaded": seat != offender}
            for seat, (name, spec) in enumerate(zip(names, specs, strict=False))
        }
        summary = {
            "game_id": None,
            "game": game.name if game is not None else args.game,
            "result": "*",
            "winner": None,
            "winner_seat": None,
            "verdict": "aborted",
            "termination": "load_failure" if offender is not None else "not_started",
            "reason": reason,
            "offender": names[offender] if offender is not None and names else None,
            "plies": 0,
            "seats": seats,
            "sandbox": sandbox,
        }
        print(json.dumps(summary), flush=True)
    return 2


def _report(
    args: argparse.Namespace,
    result: MatchResult,
    specs: Sequence[BotSpec],
    game: Game[Any],
    display: Console,
) -> int:
    """Write the record, print the result; the exit status is 1 for an aborted game."""
    report = result.report
    unwritten = _write_record(args.record, report, game)
    summary = report.summary()
    for seat, name in enumerate(report.seat_names):
        summary["seats"][name]["spec"] = specs[seat].value
        summary["seats"][name]["exit"] = result.bots[seat].describe_exit() if result.bots else None
    summary["sandbox"] = report.labels.get("sandbox", "none")
    if args.record and unwritten is None:
        summary["record"] = args.record
        _write_pack(args.record, report, summary, specs)
    if args.json:
        print(json.dumps(summary), flush=True)
    else:
        _print_result(display, summary, result, specs)
    if unwritten is not None:
        print(f"referee match: {unwritten}", file=sys.stderr)
        return 2
    return 1 if summary["verdict"] == "aborted" else 0


def _check_record_path(record: str | None) -> None:
    """``ValueError`` naming ``--record`` when its file cannot be written: said before the game
    is played, not after it."""
    from referee.commands._outpath import output_problem

    problem = output_problem(record) if record else None
    if record == "-" or problem is not None:
        raise ValueError(f"--record {problem or '-: give a file name'}")


def _write_record(record: str | None, report: GameReport, game: Game[Any]) -> str | None:
    """Write the record file; the line saying why when it could not be written after all."""
    if not record:
        return None
    from referee.commands._outpath import write_problem
    from referee.match.records import write_record_file

    try:
        write_record_file(record, report, game)
    except OSError as exc:
        return write_problem(record, exc)
    return None


def _write_pack(
    record: str, report: GameReport, summary: GameSummaryJson, specs: Sequence[BotSpec]
) -> None:
    """A faulted seat's failure pack, beside the record; its path goes in the summary."""
    from referee.match.packs import build_pack, code_digest, faulted_seat, pack_path, write_pack
    from referee.sandbox.botcode import bot_roots

    seat = faulted_seat(report)
    if seat is None:
        return
    name = report.seat_names[seat]
    pack = build_pack(report, seat)
    pack["bot"]["code_digest"] = code_digest(bot_roots(specs[seat].kind, specs[seat].value))
    path = write_pack(pack_path(record, name), pack)
    summary["seats"][name]["failure_pack"] = str(path)


def _add_opening_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--openings",
        metavar="FILE",
        help="start from an opening of this book (a file, or a game name for the shipped book)",
    )
    parser.add_argument(
        "--opening", metavar="ID", help="with --openings: this opening (default: a random one)"
    )


def _opening(args: argparse.Namespace, game: Game[Any]) -> tuple[tuple[str, ...], dict[str, str]]:
    """The opening's moves and record labels (none without ``--openings``)."""
    if not args.openings:
        if args.opening:
            raise ValueError("--opening needs --openings FILE")
        return (), {}
    import random

    from engine.records.openings import load_book, opening_labels

    book = load_book(args.openings)
    book.check_game(game)
    chosen = book.find(args.opening) if args.opening else random.choice(book.openings)
    return chosen.moves, opening_labels(chosen, book)


def _print_result(
    console: Console, summary: GameSummaryJson, result: MatchResult, specs: Sequence[BotSpec]
) -> None:
    from rich.markup import escape

    from referee.commands._safe import esc

    winner = summary["winner"]
    head = "Draw" if winner == "DRAW" else f"{winner} wins"
    console.print(
        f"[bold]{summary['result']}[/bold]  {escape(head)} after {summary['plies']} moves "
        f"[dim]({escape(verdict_label(summary['verdict'], summary['termination']))})[/dim]"
    )
    console.print(f"  {esc(summary['reason'], 1000)}")
    for name, info in summary["seats"].items():
        bot = info["bot"].rsplit(".", 1)[-1] if "/" not in info["bot"] else info["bot"]
        clock = "CPU" if summary.get("clock") == "cpu" else "wall"
        console.print(
            f"  {name:<8} {esc(bot, 20):<20} {info['time_used_s']:8.3f} s {clock:<4} "
            f"{info['peak_memory_mb']:6.1f} MB  {info['moves']:>3} moves"
        )
    names = list(summary["seats"])
    offender = summary.get("offender")
    if offender in names and result.bots:
        shown = last_output(result.bots[names.index(offender)].output.text())
        if shown:
            console.print(f"  [dim]{offender}'s last output:[/dim]")
            # Indentation is kept (a traceback reads by it); each line's text is cleaned.
            kept = (f"    {' ' * (len(ln) - len(ln.lstrip()))}{esc(ln, 1000)}" for ln in shown)
            console.print("\n".join(kept), style="dim")
    if summary.get("record"):
        console.print(f"  record: {escape(summary['record'])}")
    for seat, (name, info) in enumerate(summary["seats"].items()):
        if info.get("failure_pack"):
            pack = info["failure_pack"]
            console.print(f"  {name}'s failure pack: {escape(pack)}")
            console.print(
                f"  reproduce: python -m client_sdk reproduce {escape(pack)} {_as_bot(specs[seat])}"
            )


def _as_bot(spec: BotSpec) -> str:
    """How ``reproduce`` is told a seat's bot: ``BOT`` for a Python one, ``-- COMMAND`` for a
    command bot (a C++ or JavaScript one), which it runs as given."""
    from rich.markup import escape

    return f"-- {escape(spec.value)}" if spec.kind == "command" else "BOT"


#: Lines of a bot's output shown under the result: its last few, or its last traceback whole.
LAST_LINES = 8
MAX_TRACEBACK_LINES = 30
_TRACEBACK = "Traceback (most recent call last):"


def last_output(text: str) -> list[str]:
    """The lines worth showing of a faulty bot's output: from its last traceback's first line
    when one is near the end (never from the middle of one), else its last few lines."""
    lines = text.rstrip().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(_TRACEBACK)]
    if starts and len(lines) - starts[-1] <= MAX_TRACEBACK_LINES:
        return lines[starts[-1] :]
    if starts:
        # A traceback longer than we show: its first line, a mark, and its end.
        return [lines[starts[-1]], "  [...]", *lines[-(MAX_TRACEBACK_LINES - 2) :]]
    return lines[-LAST_LINES:]
