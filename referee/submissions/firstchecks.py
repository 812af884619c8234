"""First checks' own slots, ahead of everything that can wait.

A first check (imports, then the first moves as each seat) is what a student waits for at the
upload form; its verdict must come in seconds even while full validation games, the ladder
and the web front share the server's cores. So:

* **Slots of its own**: at most :data:`FIRST_CHECKS_AT_ONCE` run at once, and they wait only
  for each other, never for a full validation (those have the fair queue's slots,
  :mod:`referee.submissions.validation_queue`) or a ladder game.
* **The CPU first**: a first check's bots run at the referee's own niceness, while full
  validation games' and the ladder's run :data:`~referee.sandbox.priority.BACKGROUND_NICE`
  lower (:mod:`referee.sandbox.priority`), so when the cores are short the kernel serves the
  first check's bots before them.
* **Warm sandboxes** (on the server; a worker keeps its own pool): while uploads come in, the
  sandboxes of the next first checks' bots are started ahead (:mod:`referee.sandbox.warm`:
  Python with the SDK and gRPC imported, at a low priority), so a check does not wait for
  four interpreters to start. They are kept until :data:`LINGER_S` after the last check.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from referee.sandbox import warm
from referee.sandbox.isolation import choose
from referee.submissions.validate import ValidationSettings
from referee.telemetry.logs import get_logger

log = get_logger("referee.submissions.firstchecks")

#: First checks at once (each launches two games of two bots for a few moves). Part of a
#: check is waiting (bots connecting, then exiting), so three keep two cores busy; with two,
#: a burst of 300 uploads in 10 minutes queued checks for up to 10 s (bench/deadline.py).
FIRST_CHECKS_AT_ONCE = 3
#: Bots one first check launches: a game per seat, each the upload and the reference bot.
BOTS_PER_CHECK = 4
#: How long warm sandboxes are kept after the last first check (uploads come in bursts).
LINGER_S = 120.0


class FirstCheckSlots:
    """The slots first checks run in (``at_once``), with warm sandboxes for their bots while
    checks come in when ``warm_for`` names the validation's settings (its memory limit; none
    kept under the operator's ``--no-sandbox``)."""

    def __init__(
        self, warm_for: ValidationSettings | None = None, at_once: int = FIRST_CHECKS_AT_ONCE
    ) -> None:
        self.at_once = max(1, at_once)
        self._slots = asyncio.Semaphore(self.at_once)
        self._terms = None if warm_for is None else warm.WarmTerms(memory_mb=warm_for.memory_mb)
        self._no_sandbox = warm_for is not None and warm_for.no_sandbox
        self._busy = 0
        self._last = 0.0
        self._keeper: asyncio.Task[None] | None = None
        #: The longest a first check waited for its slot (seconds).
        self.longest_wait_s = 0.0

    @contextlib.asynccontextmanager
    async def slot(self, label: str) -> AsyncIterator[None]:
        """Run the block in a first check's slot (waiting only for other first checks);
        logs how long ``label``'s check waited for it and ran (``first_check_ran``)."""
        queued = time.monotonic()
        self._busy += 1
        self._keep_warm()
        try:
            async with self._slots:
                began = time.monotonic()
                self.longest_wait_s = max(self.longest_wait_s, began - queued)
                try:
                    yield
                finally:
                    log.info(
                        "first_check_ran",
                        bot=label,
                        waited_s=round(began - queued, 3),
                        ran_s=round(time.monotonic() - began, 3),
                    )
        finally:
            self._busy -= 1
            self._last = time.monotonic()

    def _keep_warm(self) -> None:
        if self._terms is not None and (self._keeper is None or self._keeper.done()):
            self._keeper = asyncio.create_task(self._warm(self._terms), name="first-check-warm")

    async def _warm(self, terms: warm.WarmTerms) -> None:
        """Hold warm sandboxes for the bots of the checks that may run at once, until
        :data:`LINGER_S` passed with no check running."""
        isolation = await asyncio.to_thread(choose, self._no_sandbox)
        wanted = self.at_once * BOTS_PER_CHECK
        async with warm.demand(wanted, terms, isolation) as need:
            if need is None:
                return
            while True:
                idle_s = time.monotonic() - self._last
                if not self._busy and idle_s >= LINGER_S:
                    return
                # Looked at again at most LINGER_S after the last check ended.
                await asyncio.sleep(LINGER_S if self._busy else LINGER_S - idle_s)

    async def close(self) -> None:
        """Stop keeping sandboxes warm (the server's shutdown); those waiting are stopped."""
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper
