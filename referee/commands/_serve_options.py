"""The options of ``referee serve`` (what it listens on, which tokens and games, pairing,
challenges, TLS, tournaments, uploads, the web front, operations); ``_serve_config.py`` reads
them once into a typed configuration, which ``serve.py`` runs."""

from __future__ import annotations

import argparse

from referee.commands import _common
from referee.commands._access import add_access_options
from referee.commands._common import add_game_options, add_limit_options, add_log_options
from referee.commands._ops import add_ops_options
from referee.commands._queued import add_queue_option
from referee.commands._uploads import add_upload_options
from referee.commands.web import DEFAULT_WEB, add_web_security_options
from referee.server.capacity import DEFAULT_ANSWER_S, DEFAULT_MAX_CHALLENGES, DEFAULT_MAX_SESSIONS
from referee.tournament import DEFAULT_REMOTE_WAIT_S


def add_challenge_options(parser: argparse.ArgumentParser) -> None:
    """Challenges (python -m client_sdk --challenge OWNER/NAME): how long one waits for the
    other side, and how many one player may have open."""
    parser.add_argument(
        "--challenge-wait",
        type=_positive,
        default=DEFAULT_ANSWER_S,
        metavar="SECONDS",
        help="how long a challenge waits for the challenged bot to be free, and then for its "
        "answer, before the challenger is told no (default %(default)g s)",
    )
    parser.add_argument(
        "--max-challenges",
        type=_at_least_one,
        default=DEFAULT_MAX_CHALLENGES,
        metavar="N",
        help="open challenges one player may have at once; more are refused at once with a "
        "sentence saying so (default %(default)s)",
    )


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text}: give a number of seconds above 0")
    return value


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: give a whole number of at least 1")
    return value


def add_tls_options(parser: argparse.ArgumentParser) -> None:
    """``--tls-cert``, ``--tls-key`` and ``--tls-client-ca`` (mutual TLS)."""
    parser.add_argument("--tls-cert", metavar="FILE", help="PEM certificate chain for TLS")
    parser.add_argument("--tls-key", metavar="FILE", help="PEM private key for TLS")
    parser.add_argument(
        "--tls-client-ca",
        metavar="FILE",
        help="mutual TLS: accept only clients whose certificate this CA (PEM) signed",
    )


def add_serve_options(parser: argparse.ArgumentParser) -> None:
    """Every option of ``referee serve``."""
    parser.add_argument(
        "--listen",
        action="append",
        default=[],
        metavar="ADDR",
        help="HOST:PORT, HOST (port 50051) or unix:PATH (repeatable; default 127.0.0.1:50051; "
        "port 0 picks one)",
    )
    add_tls_options(parser)
    parser.add_argument(
        "--tokens",
        metavar="FILE",
        help="accept only these tokens (one per line: TOKEN [PLAYER]); default: open server",
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        help=(
            "authenticate bots with the tokens stored in this database (SQLite file or URL) "
            "and serve the Arena service (tables, tournaments, games) from it; the file must "
            "exist unless --create is given"
        ),
    )
    parser.add_argument(
        "--create", action="store_true", help="create the --db SQLite file if it does not exist"
    )
    add_game_options(parser, multiple=True)
    parser.add_argument(
        "--default-game",
        metavar="NAME",
        help="the game casual pairing gives bots that ask for none (default tetress; a bot "
        "asks with python -m client_sdk --game NAME)",
    )
    parser.add_argument(
        "--rate-channels",
        action="store_true",
        help="with --db: store and rate games played in named channels (python -m client_sdk "
        "--channel) like the open pool's (default: they are not rated)",
    )
    add_limit_options(parser)
    _add_serving_options(parser)
    add_upload_options(parser)
    # Health is answered on the gRPC port itself (--listen); only metrics need their own.
    add_ops_options(parser, health=False)
    add_log_options(parser, "INFO")


def _add_serving_options(parser: argparse.ArgumentParser) -> None:
    """Pairing, records, and how the server handles shutdown, drops and silent peers."""
    add_access_options(parser)
    parser.add_argument(
        "--pair",
        choices=("auto", "none"),
        default="auto",
        help="auto: pair free bots and play; none: only accept sessions (default %(default)s)",
    )
    parser.add_argument("--records", metavar="DIR", help="write every game's record here")
    add_challenge_options(parser)
    _add_tournament_options(parser)
    parser.add_argument(
        "--address-file",
        metavar="FILE",
        help="write the bound addresses here once listening (one per line)",
    )
    parser.add_argument(
        "--shutdown-grace",
        type=float,
        default=10.0,
        metavar="S",
        help="on SIGTERM/SIGINT, seconds running games may take to finish (default %(default)g)",
    )
    parser.add_argument(
        "--reconnect-window",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds a bot whose connection dropped may take to resume its games "
        "(0: a drop is a forfeit at once; default %(default)g)",
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=DEFAULT_MAX_SESSIONS,
        metavar="N",
        help="bot sessions held at once; more are told the server is full and retry later "
        "(default %(default)s; the open files limit is raised to match)",
    )
    parser.add_argument(
        "--keepalive",
        type=float,
        default=20.0,
        metavar="S",
        help="ping a silent connection after S seconds; one that does not answer within S/2 "
        "is dropped (default %(default)g)",
    )
    parser.add_argument(
        "--web",
        default=None,
        metavar="HOST:PORT",
        help="serve the web front here, on the referee's event loop (default "
        f"{DEFAULT_WEB}; if that default port is taken the referee runs without it)",
    )
    parser.add_argument("--no-web", action="store_true", help="do not serve the web front")
    add_web_security_options(parser)


def _add_tournament_options(parser: argparse.ArgumentParser) -> None:
    """How the tournaments this server runs (with --db) treat their bots."""
    parser.add_argument(
        "--remote-timeout",
        type=float,
        default=DEFAULT_REMOTE_WAIT_S,
        metavar="S",
        help="with --db: how long each game of a tournament this server runs waits for a "
        "remote bot that is not connected before it forfeits (default %(default)g s)",
    )
    _common.add_sandbox_option(parser)
    add_queue_option(parser)
