"""``referee match RED BLUE``: one game between two bots launched on this machine."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from referee.commands._common import (
    add_game_options,
    add_limit_options,
    add_log_options,
    game_params,
    time_control,
)


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
    add_limit_options(parser)
    parser.add_argument("--record", metavar="FILE", help="write the game record (.json: JSON)")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="show the board and clocks each move"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
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
    add_log_options(parser, "WARNING")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio
    import signal

    from rich.console import Console

    from engine.errors import UnknownGameError
    from engine.registry import load_game
    from referee import logging as referee_logging
    from referee.launch import parse_bot_spec
    from referee.local import play_match

    referee_logging.configure(args.log_format, args.log_level)
    # With --json, stdout carries the one JSON object and nothing else.
    display = Console(stderr=args.json, highlight=False)
    try:
        game = load_game(args.game, **game_params(args))
        specs = [parse_bot_spec(args.first), parse_bot_spec(args.second)]
        control = time_control(args)
    except (UnknownGameError, ValueError, TypeError) as exc:
        print(f"referee match: {exc}", file=sys.stderr)
        return 2
    observer = _Display(display, game.seat_names) if args.verbose else None

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
        )

    try:
        result = asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("referee match: interrupted; every bot was stopped", file=sys.stderr)
        return 130
    report = result.report
    if args.record:
        from referee.record import write_record_file

        write_record_file(args.record, report, game)
    summary = report.summary()
    for seat, name in enumerate(report.seat_names):
        summary["seats"][name]["spec"] = specs[seat].value
        summary["seats"][name]["exit"] = result.bots[seat].describe_exit() if result.bots else None
    if args.record:
        summary["record"] = args.record
    if args.json:
        print(json.dumps(summary), flush=True)
    else:
        _print_result(display, summary, result)
    return 1 if summary["verdict"] == "aborted" else 0


def _print_result(console: Any, summary: dict[str, Any], result: Any) -> None:
    from rich.markup import escape

    winner = summary["winner"]
    head = "Draw" if winner == "DRAW" else f"{winner} wins"
    console.print(
        f"[bold]{summary['result']}[/bold]  {escape(head)} after {summary['plies']} moves "
        f"[dim]({summary['verdict']}: {escape(summary['termination'])})[/dim]"
    )
    console.print(f"  {escape(summary['reason'])}")
    for seat, (name, info) in enumerate(summary["seats"].items()):
        bot = info["bot"].rsplit(".", 1)[-1] if "/" not in info["bot"] else info["bot"]
        console.print(
            f"  {name:<8} {escape(bot[:20]):<20} {info['time_used_s']:8.3f} s "
            f"{info['peak_memory_mb']:6.1f} MB  {info['moves']:>3} moves"
        )
        offender = summary.get("offender")
        if offender == name:
            tail = result.bots[seat].output.tail(8) if result.bots else ""
            if tail:
                console.print(f"  [dim]{name}'s last output:[/dim]")
                console.print(escape(tail), style="dim")
    if summary.get("record"):
        console.print(f"  record: {escape(summary['record'])}")


class _Display:
    """``-v``: the board and both clocks after every move."""

    def __init__(self, console: Any, seat_names: tuple[str, str]) -> None:
        self.console = console
        self.seat_names = seat_names

    def on_move(self, state: Any, move: Any, clocks: Any) -> None:
        from rich.text import Text

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
        return None


def _clock(remaining: float | None, used: float) -> str:
    return f"{remaining:.2f} s left" if remaining is not None else f"{used:.2f} s used"
