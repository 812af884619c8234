"""A worker's two procrastinate workers live as one (``run_together``): a stop signal stops
both, one that ends or fails stops the other, a cancelled caller stops both, and each is let
finish its own shutdown before the call returns."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from referee.workers.slots import run_together


class Slot:
    """A stand-in for ``run_worker_async``: runs until cancelled (or ``ends``), then takes a
    few loop turns to shut down, as a worker letting its jobs finish does."""

    def __init__(
        self, ends: BaseException | None = None, *, turns: int = 3, fails: bool = False
    ) -> None:
        self.ends = ends
        self.turns = turns
        self.fails = fails
        self.started = asyncio.Event()
        self.go = asyncio.Event()
        self.drained = False

    async def __call__(self) -> None:
        self.started.set()
        try:
            await self.go.wait()
        except asyncio.CancelledError:
            for _ in range(self.turns):
                await asyncio.sleep(0)
            self.drained = True
            if self.fails:
                raise RuntimeError("could not leave the workers' table") from None
            raise
        if self.ends is not None:
            raise self.ends


def test_a_failing_worker_stops_the_other_and_its_error_is_raised() -> None:
    """The reserved slot's worker fails: the general one is stopped and has shut down, and
    the failure itself (not a group of it) reaches the caller."""
    general, reserved = Slot(), Slot(ends=RuntimeError("listener gone"))

    async def main() -> None:
        together = asyncio.create_task(run_together([general, reserved]))
        await general.started.wait()
        reserved.go.set()
        await together

    with pytest.raises(RuntimeError, match="listener gone"):
        asyncio.run(main())
    assert general.drained and not reserved.drained


def test_a_worker_that_stops_by_itself_stops_the_other() -> None:
    """One worker returns (procrastinate stops a worker whose side task failed): the other
    is stopped and has shut down when the call returns."""
    general, reserved = Slot(), Slot()

    async def main() -> None:
        together = asyncio.create_task(run_together([general, reserved]))
        await reserved.started.wait()
        general.go.set()
        await together

    asyncio.run(main())
    assert reserved.drained and not general.drained


def test_one_stop_signal_stops_both_and_the_handlers_are_put_back() -> None:
    """A SIGTERM while both run stops both (each shut down), and afterwards the handler
    found before is SIGTERM's again."""
    general, reserved = Slot(), Slot()
    before = signal.getsignal(signal.SIGTERM)

    async def main() -> None:
        together = asyncio.create_task(run_together([general, reserved]))
        await general.started.wait()
        await reserved.started.wait()
        os.kill(os.getpid(), signal.SIGTERM)
        await together

    asyncio.run(main())
    assert general.drained and reserved.drained
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_cancelled_caller_stops_both_and_leaves_no_task_running() -> None:
    """Cancelling the call cancels both workers, and each has finished its shutdown by the
    time the cancellation reaches the caller: no task is left on the loop."""
    general, reserved = Slot(), Slot()

    async def main() -> set[asyncio.Task[object]]:
        together = asyncio.create_task(run_together([general, reserved]))
        await general.started.wait()
        await reserved.started.wait()
        together.cancel()
        with pytest.raises(asyncio.CancelledError):
            await together
        return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}

    assert asyncio.run(main()) == set()
    assert general.drained and reserved.drained


def test_a_failure_while_stopping_leaves_the_others_shutdown_whole() -> None:
    """One worker stops by itself; of the two others, one fails at the end of its quick
    shutdown: the third, slower, still finishes its own, and the failure is raised after."""
    ended, failing, slow = Slot(), Slot(turns=1, fails=True), Slot(turns=20)

    async def main() -> None:
        together = asyncio.create_task(run_together([ended, failing, slow]))
        for slot in (failing, slow):
            await slot.started.wait()
        ended.go.set()
        await together

    with pytest.raises(RuntimeError, match="workers' table"):
        asyncio.run(main())
    assert failing.drained and slow.drained
