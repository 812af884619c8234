"""The job queue for the commands that run tournaments: on PostgreSQL, games of launched bots
go to ``referee worker`` processes (:mod:`referee.workers`) unless ``--in-process``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.live.hub import LiveHub
    from referee.storage import Repository
    from referee.workers.dispatch import QueueDispatcher


def add_queue_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="on PostgreSQL too, play the games here instead of enqueueing them for "
        "`referee worker` processes",
    )


@contextlib.asynccontextmanager
async def queue_for(
    in_process: bool, repo: Repository, hub: LiveHub, say: Callable[[str], object]
) -> AsyncIterator[QueueDispatcher | None]:
    """The dispatcher of ``repo``'s queue (``None``: SQLite or ``--in-process``), with the
    workers' live moves fed to ``hub``; ``say`` prints a line for the operator. On PostgreSQL
    the games played here go out to other processes (``referee web``) through ``hub``'s relay
    while this runs."""
    from referee.workers.queue import is_postgres

    if not is_postgres(repo.db.url):
        yield None
        return
    async with _relayed(repo.db.url, hub) as origin:
        if in_process:
            yield None
            return
        from referee.workers.dispatch import QueueDispatcher
        from referee.workers.live import LiveListener

        listener = LiveListener(repo.db.url, hub, own_origin=origin)
        task = asyncio.create_task(listener.run(), name="live-listener")
        try:
            async with QueueDispatcher(repo, repo.db.url) as queue:
                say(
                    "games go to the job queue: start `referee worker --db URL` processes to "
                    "play them"
                )
                yield queue
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


@contextlib.asynccontextmanager
async def _relayed(url: str, hub: LiveHub) -> AsyncIterator[str]:
    """``hub``'s own games ``NOTIFY``d on ``url`` (:mod:`referee.workers.live`) while this
    runs; yields the origin its events carry."""
    from referee.workers.live import LivePublisher, NotifyRelay, new_origin

    publisher = LivePublisher(url, origin=new_origin())
    await publisher.start()
    hub.relay = NotifyRelay(publisher)
    try:
        yield publisher.origin
    finally:
        hub.relay = None
        await publisher.close()
