"""Options shared by several subcommands: clocks, memory, games, logging."""

from __future__ import annotations

import argparse
from typing import Any

from referee.clock import DEFAULT_GAME_TIME_S, DEFAULT_GRACE_S

#: The course's memory limit per bot, in MB.
DEFAULT_MEMORY_MB = 250.0


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("limits")
    group.add_argument(
        "--time",
        type=float,
        default=DEFAULT_GAME_TIME_S,
        metavar="S",
        help="seconds per bot per game (chess clock; 0: none; default %(default)g)",
    )
    group.add_argument(
        "--move-time",
        type=float,
        default=0.0,
        metavar="S",
        help="seconds per move (0: no per-move limit; default)",
    )
    group.add_argument(
        "--increment", type=float, default=0.0, metavar="S", help="seconds added after each move"
    )
    group.add_argument(
        "--grace",
        type=float,
        default=DEFAULT_GRACE_S,
        metavar="S",
        help="slack beyond a limit before a bot is out of time (default %(default)g)",
    )
    group.add_argument(
        "--memory",
        type=float,
        default=DEFAULT_MEMORY_MB,
        metavar="MB",
        help="memory per bot in MB (0: none; default %(default)g)",
    )


def time_control(args: argparse.Namespace) -> Any:
    from referee.clock import TimeControl

    return TimeControl(
        game_time_s=args.time,
        move_time_s=args.move_time,
        increment_s=args.increment,
        grace_s=args.grace,
    )


def add_game_options(parser: argparse.ArgumentParser, *, multiple: bool = False) -> None:
    if multiple:
        parser.add_argument(
            "--game",
            action="append",
            default=[],
            metavar="NAME",
            help="a game to offer (repeatable; default: every registered game)",
        )
    else:
        parser.add_argument(
            "--game", default="tetress", metavar="NAME", help="game to play (default %(default)s)"
        )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game parameter, e.g. turn_limit=100 (repeatable)",
    )


def game_params(args: argparse.Namespace) -> dict[str, int]:
    params: dict[str, int] = {}
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"referee: --param expects KEY=VALUE, got {item!r}")
        try:
            params[key.strip()] = int(value)
        except ValueError:
            raise SystemExit(f"referee: --param {key}: {value!r} is not an integer") from None
    return params


def add_log_options(parser: argparse.ArgumentParser, default_level: str) -> None:
    parser.add_argument(
        "--log-format",
        choices=("json", "console"),
        default="console",
        help="log lines as JSON or for people (default %(default)s); logs go to stderr",
    )
    parser.add_argument(
        "--log-level", default=default_level, help="log level (default %(default)s)"
    )
