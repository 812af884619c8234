"""Stopping a set of running games: the one rule both the matchmaker and the ladder follow."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable


async def drain_tasks(tasks: Iterable[asyncio.Task[object]], grace: float) -> None:
    """Let ``tasks`` finish for ``grace`` seconds, then cancel the rest and wait them out (a
    cancelled game ends aborted, never as a loss)."""
    running = set(tasks)
    if not running:
        return
    _, pending = await asyncio.wait(running, timeout=grace)
    for task in pending:
        task.cancel()
    for task in pending:
        with contextlib.suppress(asyncio.CancelledError):
            await task
