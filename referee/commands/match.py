"""``referee match RED BLUE``: one game between two bots launched on this machine."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from referee.commands._common import (
    add_game_options,
    add_limit_options,
    add_log_options,
    add_sandbox_option,
    announce_isolation,
    game_params,
    load_game_option,
    refuse_unloadable,
    time_control,
    verdict_label,
)

if TYPE_CHECKING:
    from rich.console import Console

    from engine.game import Game
    from referee.match.local import MatchResult
    from referee.match.report import GameReport
    from referee.sandbox.launch import BotSpec


def register(subparsers: Any) -> None:
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
    add_limit_options(parser, course_flags=True)
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
    import signal

    from rich.console import Console

    from engine.errors import UnknownGameError
    from referee.match.local import play_match
    from referee.sandbox.launch import parse_bot_spec
    from referee.telemetry import logs as referee_logging

    level = {2: "INFO", 3: "DEBUG"}.get(args.verbose, args.log_level)
    referee_logging.configure(args.log_format, level)
    # With --json, stdout carries the one JSON object and nothing else.
    stream = sys.stderr if args.json else sys.stdout
    display = Console(stderr=args.json, highlight=False, soft_wrap=not stream.isatty())
    try:
        game = load_game_option(args.game, game_params(args))
        specs = [parse_bot_spec(args.first), parse_bot_spec(args.second)]
        control = time_control(args)
    except (UnknownGameError, ValueError, TypeError) as exc:
        print(f"referee match: {exc}", file=sys.stderr)
        return 2
    try:
        refuse_unloadable(specs)
        opening, labels = _opening(args, game)
    except ValueError as exc:
        print(f"referee match: {exc}", file=sys.stderr)
        return 2
    observer = _Display(display, game.seat_names) if args.verbose else None
    isolation = announce_isolation(args, "referee match")

    async def main() -> Any:
        # SIGTERM: the game may finish within the grace period, else it is recorded as
        # aborted; every bot is stopped either way. Ctrl-C cancels at once (bots cleaned up).
        shutdown = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, shutdown.set)
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

    try:
        result = asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("referee match: interrupted; every bot was stopped", file=sys.stderr)
        return 130
    return _report(args, result, specs, game, display)


def _report(
    args: argparse.Namespace,
    result: MatchResult,
    specs: Sequence[BotSpec],
    game: Game[Any],
    display: Console,
) -> int:
    """Write the record, print the result; the exit status is 1 for an aborted game."""
    report = result.report
    if args.record:
        from referee.match.records import write_record_file

        write_record_file(args.record, report, game)
    summary = report.summary()
    for seat, name in enumerate(report.seat_names):
        summary["seats"][name]["spec"] = specs[seat].value
        summary["seats"][name]["exit"] = result.bots[seat].describe_exit() if result.bots else None
    summary["sandbox"] = report.labels.get("sandbox", "none")
    if args.record:
        summary["record"] = args.record
        _write_pack(args.record, report, summary, specs)
    if args.json:
        print(json.dumps(summary), flush=True)
    else:
        _print_result(display, summary, result)
    return 1 if summary["verdict"] == "aborted" else 0


def _write_pack(
    record: str, report: GameReport, summary: dict[str, Any], specs: Sequence[BotSpec]
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


def _opening(args: argparse.Namespace, game: Any) -> tuple[tuple[str, ...], dict[str, str]]:
    """The opening's moves and record labels (none without ``--openings``)."""
    if not args.openings:
        if args.opening:
            raise ValueError("--opening needs --openings FILE")
        return (), {}
    import random

    from referee.analysis.openings import load_book, opening_labels

    book = load_book(args.openings)
    book.check_game(game)
    chosen = book.find(args.opening) if args.opening else random.choice(book.openings)
    return chosen.moves, opening_labels(chosen, book)


def _print_result(console: Any, summary: dict[str, Any], result: Any) -> None:
    from rich.markup import escape

    from referee.commands._safe import esc

    winner = summary["winner"]
    head = "Draw" if winner == "DRAW" else f"{winner} wins"
    console.print(
        f"[bold]{summary['result']}[/bold]  {escape(head)} after {summary['plies']} moves "
        f"[dim]({escape(verdict_label(summary['verdict'], summary['termination']))})[/dim]"
    )
    console.print(f"  {esc(summary['reason'], 1000)}")
    for seat, (name, info) in enumerate(summary["seats"].items()):
        bot = info["bot"].rsplit(".", 1)[-1] if "/" not in info["bot"] else info["bot"]
        console.print(
            f"  {name:<8} {esc(bot, 20):<20} {info['time_used_s']:8.3f} s "
            f"{info['peak_memory_mb']:6.1f} MB  {info['moves']:>3} moves"
        )
        offender = summary.get("offender")
        if offender == name:
            tail = result.bots[seat].output.tail(8) if result.bots else ""
            if tail:
                console.print(f"  [dim]{name}'s last output:[/dim]")
                console.print("\n".join(esc(line, 1000) for line in tail.splitlines()), style="dim")
    if summary.get("record"):
        console.print(f"  record: {escape(summary['record'])}")
    for name, info in summary["seats"].items():
        if info.get("failure_pack"):
            pack = info["failure_pack"]
            console.print(f"  {name}'s failure pack: {escape(pack)}")
            console.print(f"  reproduce: python -m client_sdk reproduce {escape(pack)} BOT")


class _Display:
    """``-v``: the board and both clocks after every move, and what each bot printed (each
    line prefixed by its seat, as the course referee shows it)."""

    def __init__(self, console: Any, seat_names: tuple[str, str]) -> None:
        self.console = console
        self.seat_names = seat_names
        self._outputs: list[Any] = []
        self._seen: list[str] = []

    def attach(self, bots: Any) -> None:
        self._outputs = [bot.output for bot in bots]
        self._seen = ["" for _ in bots]

    def flush_output(self) -> None:
        """Print the complete lines each bot wrote since the last call."""
        from referee.commands._safe import esc

        for seat, output in enumerate(self._outputs):
            text = output.text()
            seen = self._seen[seat]
            if not text.startswith(seen):
                # The capture dropped its middle (a bot printing a lot): restart from here.
                seen = text[: text.rfind("\n") + 1]
                self.console.print(f"[dim]{self.seat_names[seat]}> [... output cut ...][/dim]")
            fresh = text[len(seen) :]
            complete = fresh[: fresh.rfind("\n") + 1]
            self._seen[seat] = seen + complete
            for line in complete.splitlines():
                self.console.print(f"[dim]{self.seat_names[seat]}>[/dim] {esc(line, 1000)}")

    def on_move(self, state: Any, move: Any, clocks: Any) -> None:
        from rich.text import Text

        self.flush_output()
        name = self.seat_names[move.seat]
        times = "   ".join(
            f"{seat} {_clock(clock.remaining, clock.used)}"
            for seat, clock in zip(self.seat_names, clocks, strict=True)
        )
        self.console.print(
            f"[bold]{move.ply + 1:>3}. {name}[/bold] {move.action}  "
            f"[dim]{move.time_s:.3f} s[/dim]   {times}"
        )
        self.console.print(Text.from_ansi(state.render(color=self.console.is_terminal)))

    def on_end(self, state: Any, report: Any) -> None:
        self.flush_output()


def _clock(remaining: float | None, used: float) -> str:
    return f"{remaining:.2f} s left" if remaining is not None else f"{used:.2f} s used"
