"""Watching a move's clock while its request is being written (:class:`SendWatch`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from engine.adjudication import Allowance, Spent


class SendWatch:
    """Looks at a move's clock (``spent``) whenever it may have run out while its request is
    being written; once it has, cancels the writing ``task`` and keeps what was spent."""

    def __init__(self, task: asyncio.Task[Any], spent: Callable[[], Spent]) -> None:
        self.task = task
        self.spent = spent
        self.blown: Spent | None = None
        self._timer: asyncio.TimerHandle | None = None

    def arm(self, allowance: Allowance, spent: Spent) -> None:
        """Look again when a move that has taken ``spent`` may have run out."""
        wake = allowance.wake_in(spent)
        if wake is not None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(wake, self._check, allowance)

    def _check(self, allowance: Allowance) -> None:
        spent = self.spent()
        if allowance.blown(spent) is None:
            self.arm(allowance, spent)
            return
        self.blown = spent
        self.task.cancel()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
