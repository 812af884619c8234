"""Options shared by several subcommands: clocks, memory, games, logging."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from referee.match.clock import DEFAULT_GAME_TIME_S, DEFAULT_GRACE_S

if TYPE_CHECKING:
    from engine.game import Game
    from referee.match.clock import TimeControl
    from referee.sandbox.isolation import Isolation
    from referee.sandbox.launch import BotSpec

#: What ``parser.add_subparsers()`` returns; each command module's ``register`` adds to it.
#: (Quoted: argparse's class takes no type arguments at run time.)
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def stored_ref(value: str) -> int | str:
    """An argparse type for a stored game, tournament or bot named by name or decimal id: the
    id as an ``int`` within the database's range (the rule of :mod:`referee.server.bounds`),
    else the name; a number past that range is a usage error (one line, exit 2)."""
    from referee.server.bounds import MAX_ID, database_id

    if not (value.isascii() and value.isdigit()):
        return value
    number = database_id(value)
    if number is None:
        raise argparse.ArgumentTypeError(
            f"id {value[:40]}{'...' if len(value) > 40 else ''} is out of range "
            f"(ids go up to {MAX_ID})"
        )
    return number


#: The course's memory limit per bot, in MB.
DEFAULT_MEMORY_MB = 250.0


def add_limit_options(parser: argparse.ArgumentParser, *, move_time: float = 0.0) -> None:
    """The clock and memory options, on every command that takes limits, with the course
    referee's ``-t`` and ``-s`` spellings of ``--time`` and ``--memory``; ``move_time`` is the
    default per-move limit."""
    group = parser.add_argument_group("limits")
    group.add_argument(
        "-t",
        "--time",
        type=float,
        default=DEFAULT_GAME_TIME_S,
        metavar="S",
        help="seconds per bot per game (chess clock; 0: none; default %(default)g)",
    )
    group.add_argument(
        "--move-time",
        type=float,
        default=move_time,
        metavar="S",
        help="seconds per move (0: no per-move limit; default %(default)g)",
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
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="what the clocks count: cpu (the course's rule: each bot's own CPU seconds, with a "
        "wall-clock backstop of 3x plus 5 s for a bot that blocks or sleeps) or wall (time at "
        "the referee). Only games whose bots are all launched here can count CPU; a game with "
        "a remote bot counts wall time for both seats (default %(default)s; docs/limits.md)",
    )
    group.add_argument(
        "-s",
        "--space",
        "--memory",
        dest="memory",
        type=float,
        default=DEFAULT_MEMORY_MB,
        metavar="MB",
        help="memory per bot in MB (0: none; default %(default)g)",
    )


def time_control(args: argparse.Namespace) -> TimeControl:
    """The clocks the options ask for; ``ValueError`` names the option that is wrong."""
    import math

    from referee.match.clock import ClockMode, TimeControl

    given = {
        "--time": args.time,
        "--move-time": args.move_time,
        "--increment": args.increment,
        "--grace": args.grace,
    }
    for option, value in given.items():
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{option} must be a number of seconds >= 0, got {value:g}")
    if args.memory < 0 or not math.isfinite(args.memory):
        raise ValueError(f"--memory must be a number of MB >= 0, got {args.memory:g}")
    return TimeControl(
        game_time_s=args.time,
        move_time_s=args.move_time,
        increment_s=args.increment,
        grace_s=args.grace,
        clock=ClockMode(args.clock),
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


def load_game_option(name: str, params: dict[str, int]) -> Game[Any]:
    """The game ``--game NAME`` with ``--param`` values; errors speak in those options."""
    import inspect

    from engine.registry import load_game

    game = load_game(name)
    accepted = [p for p in inspect.signature(type(game).__init__).parameters if p != "self"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(
            f"--param {unknown[0]}: {name} has no such parameter "
            f"(its parameters: {', '.join(accepted) or 'none'})"
        )
    try:
        return load_game(name, **params)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"--param: {exc}") from None


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


def configure_logs(args: argparse.Namespace) -> None:
    """Set up logging as the options of :func:`add_log_options` ask."""
    from referee.telemetry import logs

    logs.configure(args.log_format, args.log_level)


def verdict_label(verdict: str, termination: str) -> str:
    """``verdict: termination``, or just one of them when they say the same thing."""
    if not termination or termination == verdict:
        return verdict
    return f"{verdict}: {termination}"


def refuse_unloadable(specs: Sequence[BotSpec | None], isolation: Isolation | None = None) -> None:
    """Load-check each local bot (``None``: nothing to check) through the launch path, under
    ``isolation`` (default: the sandbox where it runs); ``ValueError`` with one line for the
    first that does not load."""
    import asyncio

    from referee.match.loadcheck import check_all, refusal

    local = [s for s in specs if s is not None]
    if not local:
        return
    line = refusal(local, asyncio.run(check_all(local, isolation=isolation)))
    if line is not None:
        raise ValueError(line)


def add_sandbox_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="launch bots without the sandbox (also other owners' bots where it cannot run); "
        "see docs/sandbox.md",
    )


def announce_isolation(no_sandbox: bool, command: str) -> Isolation:
    """The isolation launched bots get (``no_sandbox``: ``--no-sandbox``); says so on stderr
    when they run uncontained."""
    import sys

    from referee.sandbox.isolation import Isolation, choose, probe

    isolation = choose(no_sandbox)
    if isolation is Isolation.NONE:
        why = "--no-sandbox" if no_sandbox else probe().line
        print(
            f"{command}: bots run WITHOUT the sandbox ({why}); games are recorded with "
            "sandbox: none",
            file=sys.stderr,
        )
    return isolation


def announced_no_sandbox(no_sandbox: bool, command: str) -> bool:
    """Say which isolation launched bots get (:func:`announce_isolation`); ``no_sandbox``."""
    announce_isolation(no_sandbox, command)
    return no_sandbox
