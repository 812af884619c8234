"""``referee web``: the web front on its own, over a database another process writes."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from referee.commands._arena import add_db_option
from referee.commands._common import Subparsers, add_log_options, configure_logs

if TYPE_CHECKING:
    import asyncio

    from referee.asgi.server import WebServer
    from referee.live.hub import LiveHub
    from referee.server.app import RefereeServer
    from referee.storage import Repository
    from referee.web.context import WebSettings

DEFAULT_WEB = "127.0.0.1:8080"


def add_web_security_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--web-secure-cookies",
        action="store_true",
        help="always mark cookies Secure (for a server behind an HTTPS proxy); by default "
        "they are Secure when the request itself came over HTTPS",
    )
    parser.add_argument(
        "--publish-thinking",
        choices=("never", "after-close", "always"),
        default="after-close",
        help="who besides a bot's owner and instructors sees its think records on the game "
        "pages: never, after-close (once the game's tournament has closed; the default) or "
        "always",
    )
    parser.add_argument(
        "--web-proxy-headers",
        action="store_true",
        help="trust X-Forwarded-For/-Proto from a reverse proxy on 127.0.0.1",
    )


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "web",
        help="serve the web front (leaderboards, games, replays) over a database",
        description=(
            "Serve the web pages and their JSON endpoints over a database that referee serve "
            "or tournaments write. Live games are only shown by the web front inside "
            "referee serve (--web), which shares the referee's event loop. Sessions are "
            "signed with $ARENA_WEB_SECRET (a random secret when unset)."
        ),
    )
    parser.add_argument(
        "--listen",
        default=DEFAULT_WEB,
        metavar="HOST:PORT",
        help="where to listen (default %(default)s; port 0 picks one)",
    )
    parser.add_argument(
        "--address-file", metavar="FILE", help="write the bound http:// address here"
    )
    add_web_security_options(parser)
    add_db_option(parser)
    add_log_options(parser, "INFO")
    parser.set_defaults(func=run)


def web_settings(secure_cookies: bool, publish_thinking: str) -> WebSettings:
    """The web front's settings: ``--web-secure-cookies``, ``--publish-thinking``."""
    from referee.web.context import WebSettings
    from referee.web.thinking import PublishThinking

    return WebSettings.from_env(
        secure_cookies=True if secure_cookies else None,
        publish_thinking=PublishThinking(publish_thinking),
    )


def run(args: argparse.Namespace) -> int:
    import asyncio

    from referee.commands._arena import open_repo

    configure_logs(args)
    try:
        repo = open_repo(args)
        settings = web_settings(args.web_secure_cookies, args.publish_thinking)
    except (ValueError, OSError) as exc:
        print(f"referee web: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(_serve(args, repo, settings))


async def _serve(args: argparse.Namespace, repo: Repository, settings: WebSettings) -> int:
    import asyncio
    import signal

    from referee.asgi.server import WebServer, parse_address
    from referee.live.hub import LiveHub
    from referee.telemetry.logs import get_logger
    from referee.web.app import create_app

    log = get_logger("referee.web")
    try:
        host, port = parse_address(args.listen)
        hub = LiveHub()
        server = WebServer(
            create_app(repo, hub, settings), host, port, proxy_headers=args.web_proxy_headers
        )
        await server.start()
    except (OSError, ValueError) as exc:
        print(f"referee web: {exc}", file=sys.stderr)
        return 1
    log.info("web_listening", url=server.url)
    if args.address_file:
        with open(args.address_file, "w", encoding="utf-8") as handle:
            handle.write(server.url + "\n")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    # On PostgreSQL the games workers play are live here too (referee/workers/live.py).
    listening = _follow_workers(repo, hub)
    await stop.wait()
    if listening is not None:
        listening.cancel()
    await server.stop()
    repo.close()
    return 0


def _follow_workers(repo: Repository, hub: LiveHub) -> asyncio.Task[None] | None:
    """On PostgreSQL: a task feeding ``hub`` with the workers' live games; else ``None``."""
    import asyncio

    from referee.workers.queue import is_postgres

    if not is_postgres(repo.db.url):
        return None
    from referee.workers.live import LiveListener

    return asyncio.create_task(LiveListener(repo.db.url, hub).run())


async def maybe_web(address: str | None, repo: Repository, hub: LiveHub) -> WebServer | None:
    """For ``referee tournament run --web``: the web front on the run's loop, showing its games
    live (``None`` without an address; ``ValueError`` when it cannot listen)."""
    if not address:
        return None
    from referee.asgi.server import start_web
    from referee.web.app import create_app
    from referee.web.context import WebSettings

    try:
        web = await start_web(create_app(repo, hub, WebSettings.from_env()), address)
    except OSError as exc:
        raise ValueError(f"--web {address}: {exc}") from None
    print(f"web pages at {web.url}", file=sys.stderr)
    return web


async def stop_serving(server: RefereeServer | None, web: WebServer | None) -> None:
    """Stop the web front, then the referee server (either may be ``None``)."""
    if web is not None:
        await web.stop()
    if server is not None:
        await server.stop(0.5)
