"""``referee worker``: play tournament games from the PostgreSQL job queue."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.commands.services import WorkerServices

from referee.commands import _common
from referee.commands._common import Subparsers, add_log_options
from referee.commands._ops import add_ops_options


def register(subparsers: Subparsers) -> None:
    from referee.workers import HEARTBEAT_S, STALL_TIMEOUT_S

    parser = subparsers.add_parser(
        "worker",
        help="play tournament games from the job queue of a PostgreSQL database",
        description=(
            "Take game jobs that tournaments on this PostgreSQL database enqueue, play each "
            "with both bots launched in the sandbox here, and record the result. Run as many "
            "as you like, on as many machines (docs/scaling.md). Besides its --concurrency "
            "slots, which take any job (an upload's first check before a validation before a "
            "game), a worker keeps one slot for uploads' first checks only, so a first check "
            "starts at once while long games fill the others. SIGTERM lets running games "
            "finish."
        ),
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        default=os.environ.get("ARENA_DATABASE_URL"),
        help="the PostgreSQL database URL (default: $ARENA_DATABASE_URL)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=0,
        metavar="N",
        help="games played at once (default: one per core), besides the slot kept for first checks",
    )
    parser.add_argument(
        "--heartbeat",
        type=float,
        default=HEARTBEAT_S,
        metavar="S",
        help="seconds between this worker's heartbeats (default %(default)g)",
    )
    parser.add_argument(
        "--stall-timeout",
        type=float,
        default=STALL_TIMEOUT_S,
        metavar="S",
        help="a worker silent this long is taken for dead and its games are played again "
        "elsewhere (default %(default)g; give every worker the same value)",
    )
    parser.add_argument(
        "--shutdown-grace",
        type=float,
        default=60.0,
        metavar="S",
        help="on SIGTERM, seconds running games may take to finish (default %(default)g)",
    )
    parser.add_argument("--name", default="", help="this worker's name in logs (default host-pid)")
    _common.add_sandbox_option(parser)
    _add_uploads_option(parser)
    add_ops_options(parser)
    add_log_options(parser, "INFO")
    parser.set_defaults(func=run)


def _add_uploads_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-unsandboxed-uploads",
        action="store_true",
        help="play ladder games of uploaded bots without the sandbox when --no-sandbox is "
        "given or the sandbox cannot run here: uploaded code is hostile, so only on a machine "
        "that holds nothing to protect",
    )


def run(args: argparse.Namespace) -> int:
    import asyncio

    from referee.commands._ops import OpsAddresses
    from referee.commands.services import WorkerServices
    from referee.telemetry import logs
    from referee.workers.queue import is_postgres
    from referee.workers.worker import WorkerOptions

    logs.configure(args.log_format, args.log_level)
    if not is_postgres(args.db):
        print(
            "referee worker: --db must be a PostgreSQL URL (postgresql+psycopg://...); "
            "SQLite is the single-machine mode, without workers",
            file=sys.stderr,
        )
        return 2
    if args.heartbeat <= 0 or args.stall_timeout <= args.heartbeat:
        print("referee worker: --stall-timeout must exceed --heartbeat (> 0)", file=sys.stderr)
        return 2
    options = WorkerOptions(
        url=args.db,
        concurrency=args.concurrency,
        heartbeat_s=args.heartbeat,
        stall_timeout_s=args.stall_timeout,
        shutdown_grace_s=args.shutdown_grace,
        no_sandbox=_common.announced_no_sandbox(args.no_sandbox, "referee worker"),
        allow_unsandboxed_uploads=args.allow_unsandboxed_uploads,
        name=args.name,
    )
    try:
        ops = OpsAddresses(args.metrics_listen, args.health_listen)
        return asyncio.run(_work(WorkerServices(options, ops)))
    except KeyboardInterrupt:
        return 130
    except (OSError, ValueError) as exc:
        print(f"referee worker: {exc}", file=sys.stderr)
        return 1


async def _work(services: WorkerServices) -> int:
    """The worker, with its operations endpoints (``--metrics-listen``, ``--health-listen``)
    on the same loop; with metrics on, the queue's depth and oldest job are sampled too."""
    import asyncio
    import contextlib

    from referee.commands._ops import start_ops
    from referee.workers.queue_metrics import sample_forever
    from referee.workers.worker import run_worker

    ops = await start_ops(services.ops)
    options = services.options
    sampler = asyncio.create_task(sample_forever(options.url)) if ops.metrics else None
    try:
        return await run_worker(options)
    finally:
        if sampler is not None:
            sampler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sampler
        await ops.stop()
