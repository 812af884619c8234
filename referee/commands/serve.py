"""``referee serve``: run a referee that remote bots connect to."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import TYPE_CHECKING

from referee.commands import _common
from referee.commands._access import server_doorway
from referee.commands._common import Subparsers
from referee.commands._ops import start_ops
from referee.commands._queued import queue_for
from referee.commands._serve_config import ServeConfig, serve_config
from referee.commands._serve_options import add_serve_options
from referee.commands._uploads import start_ladder
from referee.commands.services import ServeServices, build_serve_services
from referee.commands.web import DEFAULT_WEB
from referee.server.collector import tune_for_serving

if TYPE_CHECKING:
    from referee.asgi.server import WebServer
    from referee.commands._ops import OpsEndpoints
    from referee.hosting.autoplay import SubmittedLadder
    from referee.hosting.host import TournamentHost
    from referee.hosting.matchmaker import Matchmaker
    from referee.server.app import RefereeServer


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run a referee server for remote bots",
        description=(
            "Serve the referee protocol (tetromino.referee.v1) with gRPC health checking and "
            "reflection. Bots connect with: python -m client_sdk --server HOST:PORT --token T BOT. "
            "With --pair auto (the default) any two free bots that want the same game play it, "
            "again and again, seats alternating: a bot wants the games it asks for (--game), "
            "else the server's default game (tetress)."
        ),
    )
    add_serve_options(parser)
    parser.set_defaults(func=run)


def _open_files_for(max_sessions: int) -> None:
    from referee.server.admission import raise_open_files_limit
    from referee.telemetry.logs import get_logger

    limit, warning = raise_open_files_limit(max_sessions)
    log = get_logger("referee.commands.serve")
    log.info("capacity", max_sessions=max_sessions, open_files_limit=limit)
    if warning:
        log.warning("open_files_limit", message=warning)


def run(args: argparse.Namespace) -> int:
    from engine.errors import UnknownGameError
    from referee.commands._dbopen import DatabaseUnavailable
    from referee.telemetry import logs as referee_logging

    referee_logging.configure(args.log_format, args.log_level)
    try:
        # The options are read here, once: nothing below sees the Namespace.
        config = serve_config(args)
        services = build_serve_services(config)
    except (UnknownGameError, ValueError, TypeError, OSError, DatabaseUnavailable) as exc:
        print(f"referee serve: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(_serve(config, services))


def _resume_validations(services: ServeServices) -> asyncio.Task[int] | None:
    """Validate the uploaded versions a previous stop left ``validating`` (``--submissions``),
    adopting the workers' jobs that stop left for them (:meth:`Submissions.resume`)."""
    if services.uploads is None:
        return None
    return asyncio.create_task(services.uploads.submissions.resume())


async def _shut_down(
    config: ServeConfig,
    server: RefereeServer,
    services: ServeServices,
    pairing: tuple[Matchmaker, asyncio.Task[None]] | None,
    resumed: asyncio.Task[int] | None = None,
    hosting: asyncio.Task[None] | None = None,
    ladder: tuple[SubmittedLadder, asyncio.Task[None]] | None = None,
) -> None:
    """Stop taking sessions and pairing, let running games finish within the grace period,
    store the casual games still being written, then stop the server (validations still
    running are cut off: their versions stay ``validating`` and are validated next start)."""
    for task in (resumed, hosting):
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    server.begin_shutdown()
    if pairing is not None:
        matchmaker, task = pairing
        matchmaker.stop_pairing()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await matchmaker.drain(config.shutdown_grace)
    if ladder is not None:
        ladder[1].cancel()
        await asyncio.gather(ladder[1], return_exceptions=True)
        await ladder[0].drain(config.shutdown_grace)
    if services.recorder is not None:
        await services.recorder.drain()
    if services.uploads is not None:
        await services.uploads.close()
    await server.stop(1.0)


async def _serve(config: ServeConfig, services: ServeServices) -> int:
    import signal

    from referee.sandbox.leftovers import sweep_once
    from referee.server.app import RefereeServer
    from referee.telemetry.logs import get_logger

    log = get_logger("referee.serve")
    if removed := sweep_once():
        log.info("leftovers_removed", folders=len(removed))
    server = RefereeServer(
        auth=services.auth,
        games=[g.name for g in services.games],
        services=services.grpc_services,
        resume_window=config.reconnect_window,
        keepalive_time_s=config.keepalive,
        keepalive_timeout_s=config.keepalive / 2,
        default_game=services.default_game,
        max_sessions=config.max_sessions,
        doorway=server_doorway(config.max_logins),
        allow_duplicate_sessions=config.allow_duplicate_sessions,
        lobby=services.lobby,
    )
    _open_files_for(config.max_sessions)
    # Before the address file is written: a SIGTERM sent as soon as it appears must be a clean
    # stop, not the default handler's death.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    listening = await _listen(config, services, server)
    fronts = await _start_fronts(config, services) if listening else None
    if fronts is None:
        await server.stop(0)
        return 1
    web, ops = fronts
    if web:
        _link_sdk(server, web)
    resumed = _resume_validations(services)
    host, hosting = _start_hosting(config, services, server)
    pairing = _start_pairing(config, services, host)
    ladder = start_ladder(
        config,
        services.repo,
        services.recorder,
        services.hub,
        next(g for g in services.games if g.name == services.default_game),
        services.control,
    )
    _lessons_after_games(services, host, ladder)
    try:
        await stop.wait()
    finally:
        log.info("shutting_down", grace=config.shutdown_grace)
        if web:
            await web.stop()
        await _shut_down(config, server, services, pairing, resumed, hosting, ladder)
        await ops.stop()
    return 0


def _lessons_after_games(
    services: ServeServices,
    host: TournamentHost | None,
    ladder: tuple[SubmittedLadder, asyncio.Task[None]] | None,
) -> None:
    """Lesson runs wait while hosted tournaments or ladder games are being played."""
    if services.uploads is None:
        return
    busy = services.uploads.lesson_runs.busy
    if host is not None:
        busy.append(lambda: bool(host.running))
    if ladder is not None:
        busy.append(lambda: bool(ladder[0].running))


def _link_sdk(server: RefereeServer, web: WebServer) -> None:
    """The referee names the web front's ``/sdk`` page in a protocol refusal, and the page's
    quick start names the referee's port."""
    import socket

    host, _, port = web.url.removeprefix("http://").rpartition(":")
    if host in ("0.0.0.0", "[::]"):
        host = socket.getfqdn()
    server.sdk_url = f"http://{host}:{port}/sdk"
    tcp = [a for a in server.addresses if not a.startswith("unix:")]
    if tcp:
        web.app.state.referee_port = int(tcp[0].rpartition(":")[2])


async def _listen(config: ServeConfig, services: ServeServices, server: RefereeServer) -> bool:
    """Listen on every ``--listen`` address (and write ``--address-file``); ``False`` when one
    cannot be used (said on stderr)."""
    try:
        # Sandboxed tournament bots reach the server on a private Unix socket (no network).
        private = [services.repo is not None and not config.no_sandbox]
        private += [False] * len(services.listen)
        addresses = [
            await server.start(a, services.tls, private_socket=p)
            for a, p in zip(services.listen, private, strict=False)
        ]
    except (OSError, RuntimeError) as exc:
        print(f"referee serve: {exc}", file=sys.stderr)
        return False
    if config.address_file:
        _write_atomically(config.address_file, "".join(f"{a}\n" for a in addresses))
    return True


async def _start_fronts(
    config: ServeConfig, services: ServeServices
) -> tuple[WebServer | None, OpsEndpoints] | None:
    """The web front and the operations endpoints (``--metrics-listen``), the last of start-up
    (then the garbage collector is tuned for serving); ``None``, with whatever had started
    stopped, when one of them cannot start (said on stderr)."""
    started, web = await _start_web(config, services)
    if not started:
        return None
    try:
        ops = await start_ops(services.ops)
    except (OSError, ValueError) as exc:
        print(f"referee serve: {exc}", file=sys.stderr)
        if web is not None:
            await web.stop()
        return None
    # Start-up is done: what is alive now lives as long as the server (see collector.py).
    tune_for_serving()
    return web, ops


def _start_pairing(
    config: ServeConfig, services: ServeServices, host: TournamentHost | None = None
) -> tuple[Matchmaker, asyncio.Task[None]] | None:
    """With ``--pair auto``: the matchmaker, playing on a task; spectators follow its games."""
    from referee.hosting.matchmaker import Matchmaker

    if not config.pair:
        return None
    recorder = services.recorder
    matchmaker = Matchmaker(
        services.lobby,
        services.games,
        time_control=services.control,
        memory_limit_bytes=services.memory_bytes,
        records_dir=config.records,
        # --db: casual games are stored and feed the live ladder.
        on_game=recorder.on_game if recorder is not None else None,
        # A player's run of casual forfeits: the games it fed are voided and rerated.
        on_void=recorder.void if recorder is not None else None,
        hub=services.hub,
        mode="ladder" if recorder is not None else "casual",
        # Bots a tournament run by this server needs are not paired casually.
        reserved=host.reserved if host is not None else None,
        challenge_answer_s=config.challenge_wait,
        max_challenges=config.max_challenges,
    )
    return matchmaker, asyncio.create_task(matchmaker.run())


def _start_hosting(
    config: ServeConfig, services: ServeServices, server: RefereeServer
) -> tuple[TournamentHost | None, asyncio.Task[None] | None]:
    """With ``--db``: run the tournaments marked for this server (``referee tournament start``)
    on this loop, with this server's sessions (:mod:`referee.hosting.host`)."""
    if services.repo is None:
        return None, None
    from referee.hosting.host import TournamentHost

    host = TournamentHost(
        services.repo,
        server.handle(),
        services.hub,
        remote_timeout=config.remote_timeout or None,
        no_sandbox=_common.announced_no_sandbox(config.no_sandbox, "referee serve"),
        presence=services.presence,
    )
    return host, asyncio.create_task(_host(config.in_process, services, host))


async def _host(in_process: bool, services: ServeServices, host: TournamentHost) -> None:
    """Run ``host``; on PostgreSQL its games of launched bots go to the job queue."""
    from referee.telemetry.logs import get_logger

    log = get_logger("referee.serve")
    assert services.repo is not None
    async with queue_for(in_process, services.repo, services.hub, log.info) as queue:
        await host.run(queue)


async def _start_web(config: ServeConfig, services: ServeServices) -> tuple[bool, WebServer | None]:
    """The web front on this loop (with the upload service of ``--submissions``, if any):
    whether start-up may go on, and the server (``None`` when off)."""
    front = config.web
    if front.off:
        return True, None
    from referee.asgi.server import WebServer, parse_address
    from referee.commands.web import web_settings
    from referee.telemetry.endpoints import metrics_route
    from referee.telemetry.logs import get_logger
    from referee.web.app import create_app

    log = get_logger("referee.serve")
    try:
        host, port = parse_address(front.address or DEFAULT_WEB)
        uploads = services.uploads.submissions if services.uploads is not None else None
        settings = web_settings(front.secure_cookies, front.publish_thinking)
        app = create_app(services.repo, services.hub, settings, submissions=uploads)
        # The same /metrics as --metrics-listen, for a scraper that reaches the web port.
        app.router.routes.append(metrics_route())
        web = WebServer(app, host, port, proxy_headers=front.proxy_headers)
        await web.start()
    except (OSError, ValueError) as exc:
        if front.address is None:
            log.warning("web_not_started", reason=str(exc), address=DEFAULT_WEB)
            return True, None
        print(f"referee serve: web front: {exc}", file=sys.stderr)
        return False, None
    log.info("web_listening", url=web.url, database=services.repo is not None)
    return True, web


def _write_atomically(path: str, text: str) -> None:
    """Write ``text`` so that a reader polling ``path`` never sees it empty or half written."""
    partial = f"{path}.partial"
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(partial, path)
