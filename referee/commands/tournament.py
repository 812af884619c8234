"""``referee tournament``: create, run, resume, show and list tournaments; ``quick`` does a
small round robin in one go (the example bots by default)."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from referee.commands import _common
from referee.commands._arena import add_db_option, fail, open_repo
from referee.commands._common import Subparsers, configure_logs, stored_ref
from referee.commands._hosted import add_start_flag, hand_to_server, register_start
from referee.commands._presence import register_presence
from referee.commands._queued import queue_for
from referee.commands._tools_options import register_export, store_openings
from referee.commands._tournament_options import FORMATS, add_run_options, add_settings
from referee.commands._tournament_show import print_table
from referee.commands._tournament_show import show as _show
from referee.commands.web import maybe_web, stop_serving

if TYPE_CHECKING:
    from rich.console import Console

    from referee.commands._arena import ProgressDisplay
    from referee.hosting.presence import PresenceDesk
    from referee.live.hub import LiveHub
    from referee.sandbox.warm import Demand
    from referee.server.app import RefereeServer
    from referee.server.handle import ServerHandle
    from referee.storage import Repository, TournamentInfo, TournamentSettings
    from referee.tournament.runner import RunSummary, TournamentRunner
    from referee.workers.dispatch import QueueDispatcher

EXAMPLE_BOTS = (
    "client_sdk.examples.random_bot",
    "client_sdk.examples.greedy_bot",
    "client_sdk/examples/course_random",
    "client_sdk/examples/course_greedy",
)


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "tournament",
        help="create, run, resume and show tournaments",
        description=(
            "Tournaments live in the database: 'run' plays the missing games and can be "
            "stopped or killed at any moment; 'resume' (the same as run) continues where it "
            "stopped, replaying only games that were cut off."
        ),
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    create = sub.add_parser("create", help="create a tournament (does not play it)")
    create.add_argument("name")
    add_settings(create)
    create.add_argument(
        "--entries-close",
        metavar="TIME",
        help="submitted bots play their latest version accepted by TIME (ISO 8601, UTC unless "
        "a zone is given, or 'now'); the tournament cannot start before TIME",
    )
    add_start_flag(create)
    create.set_defaults(func=_create)

    for name, text in (("run", "play a tournament's missing games"), ("resume", "= run")):
        run = sub.add_parser(name, help=text)
        run.add_argument("name", type=stored_ref, help="tournament name or id")
        add_run_options(run)
        run.set_defaults(func=_run)

    show = sub.add_parser("show", help="a tournament's settings, progress, rounds and table")
    show.add_argument("name", type=stored_ref, help="tournament name or id")
    show.add_argument("--rounds", action="store_true", help="list every pairing's results")
    show.set_defaults(func=_show)

    register_export(sub)
    register_start(sub)
    register_presence(sub)

    listing = sub.add_parser("list", help="every tournament")
    listing.set_defaults(func=_list)

    quick = sub.add_parser(
        "quick",
        help="a round robin between BOTS (default: the example bots), then the table",
        description=(
            "Create and run a round robin in one go and print the table. Without BOTS the "
            "four example bots play. Creates the database on first use."
        ),
    )
    quick.add_argument("--name", help="tournament name (default: quick-<time>)")
    add_settings(quick, bots_optional=True)
    add_run_options(quick)
    quick.set_defaults(func=_quick)

    for p in (create, show, listing):
        add_db_option(p)


def _settings(args: argparse.Namespace, name: str) -> TournamentSettings:
    from referee.commands._common import game_params
    from referee.storage import ForfeitPolicy, TournamentFormat, TournamentSettings

    # What its clocks count (docs/limits.md); a tournament made before clock modes counts CPU.
    options: dict[str, object] = {"clock": getattr(args, "clock", "cpu")}
    challenger = getattr(args, "challenger", None)
    if challenger:
        options["challenger"] = challenger
    store_openings(args, options, game_params(args))
    for key in ("confidence", "budget"):  # the adaptive format's
        if getattr(args, key, None) is not None:
            options[key] = getattr(args, key)
    return TournamentSettings(
        name=name,
        format=TournamentFormat(FORMATS[getattr(args, "format", "round-robin")]),
        game=args.game,
        game_params=game_params(args),
        time_control={
            "per_game": args.time,
            "per_move": args.move_time,
            "increment": args.increment,
            "grace": args.grace,
        },
        memory_limit_mb=int(args.memory) if args.memory else None,
        cycles=args.cycles,
        rounds=getattr(args, "rounds", None),
        forfeit_policy=ForfeitPolicy(args.forfeit),
        concurrency=args.concurrency,
        options=options,
    )


def _create_tournament(
    repo: Repository, args: argparse.Namespace, name: str, bots: list[str]
) -> TournamentInfo:
    import dataclasses

    from referee.commands._common import load_game_option, refuse_unloadable
    from referee.play.bots import launchable_spec, resolve_bot

    settings = _settings(args, name)
    load_game_option(settings.game, dict(settings.game_params))
    if len(bots) < 2:
        raise ValueError("a tournament needs at least two bots")
    from referee.sandbox.isolation import choose

    isolation = choose(getattr(args, "no_sandbox", False))
    refuse_unloadable([launchable_spec(repo, b) for b in bots], isolation)
    versions = [resolve_bot(repo, b) for b in bots]
    if challenger := settings.options.get("challenger"):
        picked = resolve_bot(repo, challenger)
        settings = dataclasses.replace(
            settings, options={**settings.options, "challenger": str(picked.id)}
        )
        if picked.id not in [v.id for v in versions]:
            versions.insert(0, picked)
    return repo.create_tournament(settings, [v.id for v in versions])


def _create(args: argparse.Namespace) -> int:
    from engine.errors import UnknownGameError
    from referee.commands._resume import db_option
    from referee.storage import ConflictError, NotFoundError
    from referee.storage import submissions as rows
    from referee.tournament.entries import parse_time

    repo = open_repo(args)
    try:
        close = parse_time(args.entries_close) if args.entries_close else None
        t = _create_tournament(repo, args, args.name, args.bots)
    except (UnknownGameError, ConflictError, NotFoundError, ValueError, TypeError) as exc:
        return fail("tournament create", exc)
    if close is not None:
        rows.set_entries_close(repo.db, t.id, close)
        print(f"entries close at {close.isoformat()}: submitted bots play their latest accepted")
        print("version uploaded by then; the tournament can start after that")
    entrants = repo.tournament_entrants(t.id)
    print(
        f"created {t.settings.format} tournament {t.name} (id {t.id}) with "
        f"{len(entrants)} bots: {', '.join(e.label for e in entrants)}"
    )
    if args.start:
        print(hand_to_server(repo, t))
    else:
        db, name = db_option(args), shlex.quote(t.name)
        print(
            f"run it with: referee tournament start {name}{db} (on referee serve's --db) or: "
            f"referee tournament run {name}{db}"
        )
    return 0


def _run(args: argparse.Namespace) -> int:
    from referee.storage import NotFoundError

    repo = open_repo(args)
    try:
        t = repo.get_tournament(args.name)
    except NotFoundError as exc:
        return fail("tournament run", exc)
    from referee.hosting.host import is_hosted

    if is_hosted(t):
        # Two runners on one tournament would play the same games twice and fight over resume.
        return fail(
            "tournament run",
            f"tournament {t.name} is run by `referee serve` on this database (created with"
            " --start or started with `tournament start`); follow it with `tournament show`",
        )
    return _run_tournament(args, repo, t)


def _quick(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    bots = list(args.bots)
    if not bots:
        root = Path(__file__).resolve().parents[2]
        # The course-style examples play Tetress only (the course's game).
        examples = EXAMPLE_BOTS if args.game == "tetress" else EXAMPLE_BOTS[:2]
        bots = [str(root / b) if "/" in b else b for b in examples]
    name = args.name or time.strftime("quick-%Y%m%d-%H%M%S")

    def prepare() -> tuple[Repository, TournamentInfo]:
        repo = open_repo(args)
        return repo, _create_tournament(repo, args, name, bots)

    return _run_tournament(args, prepare=prepare, ahead=bots)


def _refusals() -> tuple[type[Exception], ...]:
    """What creating a tournament refuses with one line."""
    from engine.errors import UnknownGameError
    from referee.storage import ConflictError, NotFoundError

    return (UnknownGameError, ConflictError, NotFoundError, ValueError, TypeError)


def _run_tournament(
    args: argparse.Namespace,
    repo: Repository | None = None,
    t: TournamentInfo | None = None,
    *,
    prepare: Callable[[], tuple[Repository, TournamentInfo]] | None = None,
    ahead: Sequence[str] = (),
) -> int:
    """Run ``t`` on ``repo``, or the tournament ``prepare`` opens and creates (in a thread,
    while sandboxes for the ``ahead`` bots' first games start: no core waits for the other)."""
    import asyncio
    import signal

    from referee.commands._arena import console

    configure_logs(args)
    err = console(stderr=True)

    async def main() -> RunSummary | int:
        nonlocal repo, t
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        async with _warm_ahead(args, ahead) as need:
            if prepare is not None:
                try:
                    repo, t = await asyncio.to_thread(prepare)
                except _refusals() as exc:
                    return fail("tournament quick", exc)
            assert repo is not None and t is not None
            return await _play(args, repo, t, err, need)

    try:
        summary = asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        from referee.commands._resume import resume_command

        if t is None:
            print("referee tournament: stopped before any game", file=sys.stderr)
            return 130
        stopped = "referee tournament: stopped; every bot was stopped. Resume with: "
        print(stopped + resume_command(args, t.name), file=sys.stderr)
        return 130
    except ValueError as exc:
        return fail("tournament run", exc)
    if isinstance(summary, int):
        return summary
    from referee.commands._resume import report_run

    assert repo is not None and t is not None
    return report_run(err, summary, repo, t, args, print_table)


def _warm_ahead(args: argparse.Namespace, bots: Sequence[str]) -> AbstractAsyncContextManager[Any]:
    """Warm sandboxes for the first games of ``bots``, started before the database is opened
    and the bots load-checked (nothing when games go to the workers' queue)."""
    import contextlib
    import os

    from referee.storage.db import ENV_VAR

    url = getattr(args, "db", None) or os.environ.get(ENV_VAR) or ""
    if not bots or (url.startswith("postgres") and not getattr(args, "in_process", False)):
        return contextlib.nullcontext(None)
    from referee.sandbox import warm
    from referee.sandbox.isolation import choose
    from referee.sandbox.launch import parse_bot_spec

    workers = args.run_concurrency or args.concurrency or os.cpu_count() or 1
    terms = warm.WarmTerms(memory_mb=int(args.memory) if args.memory else None)
    numpy = warm.may_import_numpy(parse_bot_spec(b) for b in bots)
    return warm.demand(2 * workers, terms, choose(args.no_sandbox), numpy=numpy)


async def _play(
    args: argparse.Namespace,
    repo: Repository,
    t: TournamentInfo,
    err: Console,
    need: Demand | None,
) -> RunSummary:
    """Play ``t``'s missing games (``need``: warm sandboxes already asked for them)."""
    from referee.commands._arena import ProgressDisplay
    from referee.hosting.presence import PresenceDesk, watch_presence
    from referee.live.hub import LiveHub
    from referee.storage.locks import LockWait

    # A run writes for hours: a database locked for a while is waited for (docs/storage.md).
    repo.db.wait_for_locks(LockWait())
    hub = LiveHub()
    web = await maybe_web(args.web, repo, hub)
    # Presence is known only of the tournament run here (no sessions before it starts).
    desk = PresenceDesk()
    server = await _maybe_server(args, repo, t, hub, desk)
    handle = server.handle() if server is not None else None
    display = None if args.no_progress else ProgressDisplay(err, t.name)
    try:
        async with queue_for(getattr(args, "in_process", False), repo, hub, err.print) as queue:
            runner = _runner(args, repo, t, hub, handle, display, queue)
            runner.warm_ahead = need
            watcher = watch_presence(repo, t, runner, handle, args.remote_timeout, err, desk=desk)
            try:
                if display is not None:
                    with display:
                        return await runner.run()
                return await runner.run()
            finally:
                if watcher is not None:
                    watcher.cancel()
    finally:
        await stop_serving(server, web)


def _runner(
    args: argparse.Namespace,
    repo: Repository,
    t: TournamentInfo,
    hub: LiveHub,
    server: ServerHandle | None,
    display: ProgressDisplay | None,
    queue: QueueDispatcher | None,
) -> TournamentRunner:
    from referee.tournament.runner import TournamentRunner

    return TournamentRunner(
        repo,
        t.id,
        concurrency=args.run_concurrency,
        hub=hub,
        server=server,
        progress=display,
        ladder=None if args.no_ladder else args.ladder,
        remote_timeout=args.remote_timeout,
        no_sandbox=_common.announced_no_sandbox(args.no_sandbox, "referee tournament"),
        queue=queue,
    )


async def _maybe_server(
    args: argparse.Namespace,
    repo: Repository,
    t: TournamentInfo,
    hub: LiveHub,
    presence: PresenceDesk,
) -> RefereeServer | None:
    from referee.storage import SourceKind

    remote = any(e.source_kind is SourceKind.REMOTE for e in repo.tournament_entrants(t.id))
    if not args.listen and not remote:
        return None
    from referee.commands._remote import start_referee

    # Launched bots in the sandbox reach it on a private Unix socket.
    private = not args.no_sandbox
    return await start_referee(
        repo, t.settings.game, args.listen, hub, "this tournament", private, presence
    )


def _list(args: argparse.Namespace) -> int:
    from referee.commands._arena import console
    from referee.commands._safe import SafeTable as Table

    repo = open_repo(args)
    table = Table(title="Tournaments")
    for column in ("id", "name", "format", "game", "status", "games", "created"):
        table.add_column(column)
    for t in repo.list_tournaments():
        table.add_row(
            str(t.id),
            t.name,
            str(t.settings.format),
            t.settings.game,
            str(t.status),
            str(repo.count_games(tournament_id=t.id)),
            t.created_at.strftime("%Y-%m-%d %H:%M"),
        )
    console().print(table)
    return 0
