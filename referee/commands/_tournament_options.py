"""The options of ``referee tournament create``, ``run`` and ``quick`` (its settings, and how
a run plays its games)."""

from __future__ import annotations

import argparse

from referee.commands import _common
from referee.commands._arena import add_db_option
from referee.commands._common import add_game_options, add_limit_options, add_log_options
from referee.commands._queued import add_queue_option
from referee.commands._tools_options import add_openings_option
from referee.tournament import DEFAULT_REMOTE_WAIT_S

FORMATS = {
    "round-robin": "round_robin",
    "round_robin": "round_robin",
    "rr": "round_robin",
    "swiss": "swiss",
    "gauntlet": "gauntlet",
    "adaptive": "adaptive",
}


def _probability(text: str) -> float:
    value = float(text)
    if not 0.5 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a probability between 0.5 and 1")
    return value


def add_settings(parser: argparse.ArgumentParser, bots_optional: bool = False) -> None:
    parser.add_argument(
        "bots",
        nargs="*" if bots_optional else "+",
        metavar="BOT",
        help="registered bot (name or name@version), package dir, SDK module, file or command",
    )
    if not bots_optional:
        parser.add_argument(
            "--format",
            choices=sorted(FORMATS),
            default="round-robin",
            help="default %(default)s",
        )
        parser.add_argument("--rounds", type=int, help="Swiss rounds (default ceil(log2 n))")
        parser.add_argument(
            "--challenger", help="gauntlet: the bot that meets the field (default: the first)"
        )
        parser.add_argument(
            "--confidence",
            type=_probability,
            metavar="P",
            help="adaptive: stop when every two neighbours' order is this sure (default 0.95)",
        )
        parser.add_argument(
            "--budget",
            type=int,
            metavar="GAMES",
            help="adaptive: play at most this many games (default: a quarter of a round robin's)",
        )
    parser.add_argument(
        "--cycles", type=int, default=1, help="round robin / gauntlet cycles (default 1)"
    )
    add_game_options(parser)
    add_limit_options(parser)
    parser.add_argument(
        "--concurrency",
        type=int,
        help="games at once (default: the number of cores)",
    )
    add_openings_option(parser)
    parser.add_argument(
        "--forfeit",
        choices=("loss", "void"),
        default="loss",
        help="a time, memory, illegal-move or crash forfeit is a loss (default) or voids the game",
    )


def add_run_options(parser: argparse.ArgumentParser) -> None:
    add_db_option(parser)
    parser.add_argument(
        "--concurrency-now",
        dest="run_concurrency",
        type=int,
        help="games at once for this run (default: the tournament's setting)",
    )
    parser.add_argument(
        "--listen",
        metavar="ADDR",
        help="serve the referee (remote bots) and the Arena service (spectators) here",
    )
    parser.add_argument(
        "--remote-timeout",
        type=float,
        default=DEFAULT_REMOTE_WAIT_S,
        metavar="S",
        help="how long each game waits for a remote bot that is not connected before it "
        "forfeits (default %(default)g s)",
    )
    parser.add_argument(
        "--web",
        metavar="HOST:PORT",
        help="also serve the web pages here, with this run's games live (see docs/web.md)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--ladder", default="main", help="live ladder to update (default main)")
    parser.add_argument("--no-ladder", action="store_true", help="do not update a ladder")
    _common.add_sandbox_option(parser)
    add_queue_option(parser)
    if not any(a.dest == "log_format" for a in parser._actions):
        add_log_options(parser, "WARNING")
