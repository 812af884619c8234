"""``referee serve``: run a referee that remote bots connect to."""

from __future__ import annotations

import argparse
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
        "serve",
        help="run a referee server for remote bots",
        description=(
            "Serve the referee protocol (tetromino.referee.v1) with gRPC health checking and "
            "reflection. Bots connect with: python -m client_sdk --server HOST:PORT --token T BOT. "
            "With --pair auto (the default) any two free bots that share a game play it, again "
            "and again, seats alternating."
        ),
    )
    parser.add_argument(
        "--listen",
        action="append",
        default=[],
        metavar="ADDR",
        help="HOST:PORT or unix:PATH (repeatable; default 127.0.0.1:50051; port 0 picks one)",
    )
    parser.add_argument("--tls-cert", metavar="FILE", help="PEM certificate chain for TLS")
    parser.add_argument("--tls-key", metavar="FILE", help="PEM private key for TLS")
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
            "and serve the Arena service (tables, tournaments, games) from it"
        ),
    )
    add_game_options(parser, multiple=True)
    add_limit_options(parser)
    parser.add_argument(
        "--pair",
        choices=("auto", "none"),
        default="auto",
        help="auto: pair free bots and play; none: only accept sessions (default %(default)s)",
    )
    parser.add_argument("--records", metavar="DIR", help="write every game's record here")
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
        "--keepalive",
        type=float,
        default=20.0,
        metavar="S",
        help="ping a silent connection after S seconds; one that does not answer within S/2 "
        "is dropped (default %(default)g)",
    )
    add_log_options(parser, "INFO")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from engine.errors import UnknownGameError
    from engine.registry import game_names, load_game
    from referee import logging as referee_logging
    from referee.auth import OpenAuth, TokenTable, read_token_file
    from referee.server import TlsFiles

    referee_logging.configure(args.log_format, args.log_level)
    try:
        names = args.game or game_names()
        params = game_params(args)
        games = [load_game(name, **(params if args.game else {})) for name in names]
        control = time_control(args)
        auth: Any = TokenTable(read_token_file(args.tokens)) if args.tokens else OpenAuth()
        services: list[Any] = []
        recorder: Any = None
        if args.db:
            if args.tokens:
                raise ValueError("--tokens and --db are two sources of tokens: give one")
            from referee.storage import Repository
            from referee.storage.auth import StoredTokenAuth
            from referee.tournament.arena import ArenaService

            repo = Repository.open(args.db)
            auth = StoredTokenAuth(repo)
            services.append(ArenaService(repo))
            from referee.tournament.casual import CasualRecorder

            recorder = CasualRecorder(repo)
    except (UnknownGameError, ValueError, TypeError, OSError) as exc:
        print(f"referee serve: {exc}", file=sys.stderr)
        return 2
    if bool(args.tls_cert) != bool(args.tls_key):
        print("referee serve: --tls-cert and --tls-key go together", file=sys.stderr)
        return 2
    tls = TlsFiles(args.tls_cert, args.tls_key) if args.tls_cert else None
    memory = int(args.memory * 1024 * 1024)
    return asyncio.run(_serve(args, games, control, auth, tls, memory, services, recorder))


async def _serve(
    args: argparse.Namespace,
    games: list[Any],
    control: Any,
    auth: Any,
    tls: Any,
    memory: int,
    services: list[Any] | None = None,
    recorder: Any = None,
) -> int:
    import asyncio
    import signal

    from referee.logging import get_logger
    from referee.matchmaker import Matchmaker
    from referee.server import RefereeServer

    log = get_logger("referee.serve")
    server = RefereeServer(
        auth=auth,
        games=[g.name for g in games],
        services=services or (),
        resume_window=args.reconnect_window,
        keepalive_time_s=args.keepalive,
        keepalive_timeout_s=args.keepalive / 2,
    )
    try:
        addresses = [await server.start(a, tls) for a in (args.listen or ["127.0.0.1:50051"])]
    except (OSError, RuntimeError) as exc:
        print(f"referee serve: {exc}", file=sys.stderr)
        await server.stop(0)
        return 1
    if args.address_file:
        with open(args.address_file, "w", encoding="utf-8") as handle:
            handle.write("".join(f"{a}\n" for a in addresses))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    matchmaker = None
    pairing = None
    if args.pair == "auto":
        matchmaker = Matchmaker(
            server.lobby,
            games,
            time_control=control,
            memory_limit_bytes=memory,
            records_dir=args.records,
            # --db: casual games are stored and feed the live ladder.
            on_game=recorder.on_game if recorder is not None else None,
        )
        pairing = asyncio.create_task(matchmaker.run())
    try:
        await stop.wait()
    finally:
        log.info("shutting_down", grace=args.shutdown_grace)
        server.begin_shutdown()
        if matchmaker is not None and pairing is not None:
            matchmaker.stop_pairing()
            pairing.cancel()
            await asyncio.gather(pairing, return_exceptions=True)
            await matchmaker.drain(args.shutdown_grace)
        if recorder is not None:
            await recorder.drain()
        await server.stop(1.0)
    return 0
