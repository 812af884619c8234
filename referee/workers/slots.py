"""A worker's two procrastinate workers, run as one process's work.

A ``referee worker`` takes jobs with two procrastinate workers on one app: its general one
(``--concurrency`` slots, both queues) and one with a slot kept for uploads' first checks
(their queue only, :data:`~referee.workers.FIRST_CHECK_QUEUE`). :func:`run_together` gives
them one life: SIGTERM/SIGINT stop both (the handlers are installed once, for both), a worker
that ends (it stopped itself, or failed) stops the other, and a cancelled caller stops both.
Stopping is procrastinate's own when its ``run_worker_async`` is cancelled: take no more jobs,
let the running ones finish for the shutdown grace (abort them after), leave the workers'
table. Every task started here has ended when :func:`run_together` returns or raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from types import FrameType
from typing import TypeAlias

from referee.telemetry.logs import get_logger

log = get_logger("referee.workers.slots")

#: The signals that stop a worker (a second one acts as if none were handled).
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

#: A signal's handler, as ``signal.getsignal`` answers and ``signal.signal`` takes it.
_Handler: TypeAlias = Callable[[int, FrameType | None], object] | int | signal.Handlers | None


async def run_together(runs: Sequence[Callable[[], Awaitable[None]]]) -> None:
    """Run each of ``runs`` (a procrastinate worker each) until a stop signal or until one of
    them ends, then stop the others by cancelling them, once each; an error of one is raised
    once all have stopped (the first, when several failed)."""
    signalled = asyncio.Event()
    stopping = asyncio.Event()
    late: list[Exception] = []

    async def run_one(run: Callable[[], Awaitable[None]]) -> None:
        try:
            await run()
        except Exception as exc:
            if not stopping.is_set():
                raise  # the group cancels the others
            # Kept for after: a failure while stopping must not cut the others' shutdown
            # short (the group would cancel them a second time, mid-way).
            late.append(exc)

    try:
        with _stop_signals(signalled.set):
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(run_one(run)) for run in runs]
                told = group.create_task(signalled.wait())
                await asyncio.wait({*tasks, told}, return_when=asyncio.FIRST_COMPLETED)
                reason = "signal" if signalled.is_set() else "one of its workers stopped"
                log.info("worker_stopping", reason=reason)
                stopping.set()
                for task in (*tasks, told):
                    task.cancel()
    except ExceptionGroup as errors:
        late[:0] = errors.exceptions
    if late:
        first, *others = late
        for other in others:
            log.error("worker_failed", reason=f"{type(other).__name__}: {other}")
        raise first


@contextlib.contextmanager
def _stop_signals(stop: Callable[[], None]) -> Iterator[None]:
    """While the block runs, the first SIGTERM or SIGINT calls ``stop``; the handlers found
    before are put back then, so a second signal acts as it would have (by default SIGINT
    raises KeyboardInterrupt, SIGTERM ends the process). Off the main thread no handler can be
    installed: none is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()
    installed: list[tuple[signal.Signals, _Handler]] = []

    def remove() -> None:
        while installed:
            sig, before = installed.pop()
            loop.remove_signal_handler(sig)
            signal.signal(sig, before)

    def fired() -> None:
        remove()
        stop()

    try:
        for sig in STOP_SIGNALS:
            before = signal.getsignal(sig)
            loop.add_signal_handler(sig, fired)
            installed.append((sig, before))
        yield
    finally:
        remove()
