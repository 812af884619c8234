"""Seat finding: which sessions in a server's lobby play the seats of a tournament game.

A remote bot version is played by a session opened with its owner's token whose hello names
the version's ``location`` (the bot's name) and offers the game; a launched bot by the session
that presented its one-game token (:class:`referee.server.handle.OneGameTokens`). Every seat of a
game is taken at once, and a session taken for one game is reserved until its match runner
holds it, so two games never take the same session.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from referee.sandbox.launch import LaunchedBot
from referee.server.handle import SessionPool
from referee.server.session import BotSession
from referee.storage import BotVersionInfo

#: Whether a session may take a seat.
SessionTest = Callable[[BotSession], bool]

#: How often a wait for sessions wakes to notice a launched bot whose process exited.
LAUNCHED_POLL_S = 0.25


def player_is(player: str) -> SessionTest:
    """The session authenticated as ``player`` (a launched bot's one-game identity)."""

    def matches(session: BotSession) -> bool:
        return session.identity.player_id == player

    return matches


class SeatFinder:
    """Takes sessions from ``sessions`` (a server's lobby) for the seats of games of ``game``."""

    def __init__(self, sessions: SessionPool, game: str) -> None:
        self.sessions = sessions
        self.game = game
        #: Bot version id -> the name of the player who owns it (for remote versions).
        self.owners: dict[int, str] = {}
        self._reserved: set[str] = set()
        #: Remote bot version id -> how many games are waiting for a session of it now.
        self.waiting: Counter[int] = Counter()
        # The remote test of each version, to know whom a waiting game waits for.
        self._remote_of: dict[int, int] = {}

    def remote(self, version: BotVersionInfo) -> SessionTest:
        """A free session of the owner of remote ``version``, named for it, offering the game."""
        owner = self.owners.get(version.id)
        game = self.game

        def matches(s: BotSession) -> bool:
            return (
                s.identity.player_id == owner
                and s.identity.name == version.location
                and s.plays(game)
                and s.is_free()
                and s.session_id not in self._reserved
            )

        self._remote_of[id(matches)] = version.id
        return matches

    def capacity(self, version: BotVersionInfo) -> int:
        """How many games remote ``version`` can play at once now: the sum of the game slots
        (the Hello's ``max_games``) of its owner's open sessions named for it."""
        owner = self.owners.get(version.id)
        return sum(
            s.max_games
            for s in self.sessions.sessions()
            if s.identity.player_id == owner
            and s.identity.name == version.location
            and s.plays(self.game)
            and not s.closed.is_set()
        )

    def release(self, sessions: Iterable[BotSession]) -> None:
        """End the reservation of ``sessions`` (their match runner holds them now)."""
        for s in sessions:
            self._reserved.discard(s.session_id)

    async def take(
        self,
        wanted: Sequence[SessionTest],
        limits: Sequence[float | None],
        launched: Sequence[LaunchedBot | None],
    ) -> list[BotSession | None]:
        """Sessions for every seat at once (taking them one by one could deadlock two games
        that wait for each other's bots). A seat still missing after its limit (seconds,
        ``None``: no limit), or whose launched process has exited, is ``None``; the sessions
        found are reserved only when every seat has one."""
        counted: list[int] = []
        try:
            return await self._take(wanted, limits, launched, counted)
        finally:
            self.waiting.subtract(counted)
            self.waiting += Counter()  # drop the zeros

    async def _take(
        self,
        wanted: Sequence[SessionTest],
        limits: Sequence[float | None],
        launched: Sequence[LaunchedBot | None],
        counted: list[int],
    ) -> list[BotSession | None]:
        now = time.monotonic()
        deadlines = [None if limit is None else now + limit for limit in limits]
        while True:
            since = self.sessions.generation
            chosen = self._pick(wanted)
            if all(s is not None for s in chosen):
                self._reserved.update(s.session_id for s in chosen if s is not None)
                return chosen
            now = time.monotonic()
            waiting = [
                d
                for s, d, bot in zip(chosen, deadlines, launched, strict=True)
                if s is None and (d is None or d > now) and (bot is None or bot.running)
            ]
            starting = any(
                s is None and bot is not None and bot.running and (d is None or d > now)
                for s, d, bot in zip(chosen, deadlines, launched, strict=True)
            )
            if len(waiting) < chosen.count(None) and not starting:
                # A seat is given up on: the game cannot start. (A launched bot still starting
                # up, e.g. in its sandbox, gets its time first, so the blame lands right.)
                return chosen
            if not counted:
                # Counted once per game: presence shows these entries as "waiting".
                for test, s in zip(wanted, chosen, strict=True):
                    if s is None and id(test) in self._remote_of:
                        counted.append(self._remote_of[id(test)])
                self.waiting.update(counted)
            left = None if None in waiting else min(d for d in waiting if d is not None) - now
            # Also wake now and then to notice a launched process that exited.
            poll = LAUNCHED_POLL_S if any(b is not None for b in launched) else None
            wait = left if poll is None else (poll if left is None else min(left, poll))
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self.sessions.wait_change(since)

    def _pick(self, wanted: Sequence[SessionTest]) -> list[BotSession | None]:
        """One distinct open session per seat where one matches, else ``None``."""
        chosen: list[BotSession | None] = []
        taken: set[str] = set()
        for predicate in wanted:
            pick = next(
                (s for s in self.sessions.sessions() if s.session_id not in taken and predicate(s)),
                None,
            )
            if pick is not None:
                taken.add(pick.session_id)
            chosen.append(pick)
        return chosen
