"""``python -m client_sdk --server HOST:PORT --token T BOT``: connect one bot to a referee.

BOT is a course-style package directory (``path/to/pkg`` or ``path/to/pkg:ClassName``), an
SDK module (``client_sdk.examples.random_bot`` or ``module:Name``) or a Python file
(``bot.py`` or ``bot.py:Name``). Everything this command and the bot print goes to stderr;
stdin is closed for the bot.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import grpc


def _isolate_stdio() -> None:
    """Send stdout to stderr (a bot's ``print`` included) and give the bot an empty stdin."""
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), 1)
    sys.stdout = sys.stderr
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 (lives as long as the process)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m client_sdk",
        description="Connect a bot to a tetromino referee and play the games it is given.",
    )
    parser.add_argument("bot", metavar="BOT", help="package dir[:Class], module[:Name] or file.py")
    parser.add_argument("--server", required=True, help="HOST:PORT or unix:PATH of the referee")
    parser.add_argument("--token", default="", help="your player token (open servers take any)")
    parser.add_argument("--name", help="the bot's name (default: from the BOT argument)")
    parser.add_argument("--version", default="", dest="bot_version", help="the bot's version")
    parser.add_argument("--games", type=int, help="stop after this many games (default: all)")
    parser.add_argument(
        "--game", action="append", default=[], help="a game this bot plays (repeatable)"
    )
    parser.add_argument("--tls", action="store_true", help="connect with TLS")
    parser.add_argument("--ca", help="CA certificate file for --tls (default: system roots)")
    parser.add_argument(
        "--no-reconnect", action="store_true", help="exit instead of reconnecting on a drop"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _isolate_stdio()
    args = _parser().parse_args(argv)

    from client_sdk.loader import BotLoadError
    from client_sdk.session import SessionError, run

    credentials = None
    if args.tls:
        root = None
        if args.ca:
            with open(args.ca, "rb") as handle:
                root = handle.read()
        credentials = grpc.ssl_channel_credentials(root_certificates=root)
    try:
        results = run(
            args.bot,
            args.server,
            args.token,
            name=args.name,
            version=args.bot_version,
            games=args.games,
            game_names=args.game,
            credentials=credentials,
            reconnect=not args.no_reconnect,
        )
    except BotLoadError as exc:
        print(f"python -m client_sdk: {exc}", file=sys.stderr)
        return 2
    except SessionError as exc:
        print(f"python -m client_sdk: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    won = sum(r.won for r in results)
    drawn = sum(r.drawn for r in results)
    print(
        f"[client_sdk] {len(results)} game(s): {won} won, {drawn} drawn, "
        f"{len(results) - won - drawn} lost",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
