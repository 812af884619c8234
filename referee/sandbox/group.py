"""SupervisorGroup: launches bots and guarantees they are all stopped when it closes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from referee.sandbox.process import BotProcess, ClosedOnExit

__all__ = ["SupervisorGroup"]


class SupervisorGroup(ClosedOnExit):
    """Owns every bot it starts: ``aclose()`` (or leaving ``async with``) stops them all.

    ``defaults`` are keyword arguments for :meth:`BotProcess.start` applied to every launch
    (each ``start`` call may override them).
    """

    def __init__(self, *, grace_s: float = 1.0, **defaults: Any) -> None:
        self.grace_s = grace_s
        self.defaults = defaults
        self._procs: list[BotProcess] = []
        self._closing = False

    @property
    def processes(self) -> tuple[BotProcess, ...]:
        """Bots started by this group and not yet released."""
        return tuple(self._procs)

    async def start(self, argv: Sequence[str], **kwargs: Any) -> BotProcess:
        """Launch a bot owned by this group (see :meth:`BotProcess.start`)."""
        if self._closing:
            raise RuntimeError("SupervisorGroup is closed")
        proc = await BotProcess.start(argv, **{**self.defaults, **kwargs})
        self._procs.append(proc)
        return proc

    async def stop(self, proc: BotProcess, grace_s: float | None = None) -> None:
        """Stop one bot of the group now and forget it."""
        try:
            await proc.stop(self.grace_s if grace_s is None else grace_s)
        finally:
            if proc in self._procs:
                self._procs.remove(proc)

    async def aclose(self, grace_s: float | None = None) -> None:
        """Refuse new launches and stop every bot of the group concurrently."""
        self._closing = True
        grace = self.grace_s if grace_s is None else grace_s
        try:
            async with asyncio.TaskGroup() as tg:
                for proc in list(self._procs):
                    tg.create_task(proc.stop(grace), name=f"stop-bot-{proc.pid}")
        finally:
            # Anything a failed or cancelled stop left behind is killed synchronously.
            for proc in self._procs:
                proc.kill_now()
            self._procs.clear()
