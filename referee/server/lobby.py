"""The connected bot sessions, and waiting for the ones a match or tournament needs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from referee.server.session import BotSession
from referee.telemetry import metrics


class Lobby:
    """Every authenticated, open session, with a way to wait for changes."""

    def __init__(self) -> None:
        self._sessions: dict[str, BotSession] = {}
        self._changed = asyncio.Condition()
        #: Bumped on every change, so a waiter cannot miss one between looking and waiting.
        self.generation = 0

    def __len__(self) -> int:
        return len(self._sessions)

    def sessions(self) -> list[BotSession]:
        """Open sessions in order of arrival."""
        return [s for s in self._sessions.values() if not s.closed.is_set()]

    def get(self, session_id: str) -> BotSession | None:
        """The session with this id, while it has not been removed."""
        return self._sessions.get(session_id)

    async def add(self, session: BotSession) -> None:
        if session.session_id not in self._sessions:
            metrics.session_opened()
        self._sessions[session.session_id] = session
        await self.notify()

    async def remove(self, session: BotSession) -> None:
        if self._sessions.pop(session.session_id, None) is not None:
            metrics.session_closed()
        await self.notify()

    async def notify(self) -> None:
        """Wake everyone waiting (a session arrived, left, or became free)."""
        self.generation += 1
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(
        self, predicate: Callable[[BotSession], bool], timeout: float | None = None
    ) -> BotSession:
        """The first open session matching ``predicate``; ``TimeoutError`` after ``timeout``."""
        async with asyncio.timeout(timeout), self._changed:
            while True:
                for session in self.sessions():
                    if predicate(session):
                        return session
                await self._changed.wait()

    async def wait_change(self, since: int) -> None:
        """Return once :attr:`generation` has moved past ``since``."""
        async with self._changed:
            while self.generation <= since:
                await self._changed.wait()
