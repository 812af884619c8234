"""Playing one tournament game: with launched bots only, or on a server with remote seats.

Launched bots (package, SDK module, command) get fresh processes for every game
(:func:`referee.play.local.play_match`). A game with a remote seat is played on the
tournament's server: the remote bots are taken from its lobby (:mod:`.seats`), and a launched
bot in such a game connects to it with a one-game token; the server is known only by its
:class:`~referee.server.handle.ServerHandle`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.game import Game
from referee.match.clock import TimeControl
from referee.match.launched import cpu_meters, note_launched, unplayed_end, watch_launched
from referee.match.report import SeatReport, unplayed_report
from referee.match.runner import GameReport, MatchRunner, Observer
from referee.play.bots import launch_spec
from referee.play.local import play_match
from referee.play.seats import SeatFinder, SessionTest, player_is
from referee.sandbox.isolation import Isolation
from referee.sandbox.launch import LaunchedBot, launch
from referee.sandbox.relay import SocketRelay
from referee.server.handle import ServerHandle
from referee.server.session import BotSession
from referee.storage import BotVersionInfo, SourceKind


@dataclass(eq=False)
class Played:
    """A game's report and what each seat's bot printed (empty for remote bots)."""

    report: GameReport
    outputs: list[str] = field(default_factory=list)
    #: Seats whose remote bot had no free session within the wait (the game was not played).
    absent: list[int] = field(default_factory=list)


@dataclass(slots=True)
class GameTerms:
    """What every game of a tournament is played with."""

    game: Game[Any]
    time_control: TimeControl
    memory_mb: int | None
    #: Seconds a launched bot has to connect (given up on at once if its process exits).
    connect_timeout: float
    #: Seconds a remote bot has to be in the lobby (``None``: wait for it; the commands always
    #: give :data:`DEFAULT_REMOTE_WAIT_S` or the instructor's figure).
    remote_timeout: float | None
    #: How launched bots are contained (recorded in every game's ``sandbox`` label).
    isolation: Isolation = Isolation.NONE

    @property
    def memory_limit_bytes(self) -> int:
        return int((self.memory_mb or 0) * 1024 * 1024)


class GamePlayer:
    """Plays tournament games on the ``terms``; ``server`` is needed for remote seats."""

    def __init__(self, terms: GameTerms, server: ServerHandle | None = None) -> None:
        self.terms = terms
        self.server = server
        self.seats = SeatFinder(server.sessions, terms.game.name) if server is not None else None
        #: Told of every game not played because remote seats had no session in time:
        #: ``(seats, absent seats, labels, report)`` (see :mod:`referee.hosting.skipped`).
        self.on_absent: (
            Callable[[Sequence[BotVersionInfo], list[int], dict[str, str], GameReport], None] | None
        ) = None

    async def play(
        self,
        seats: Sequence[BotVersionInfo],
        uid: str,
        labels: dict[str, str],
        observer: Observer | None,
        opening: Sequence[str] = (),
    ) -> Played:
        """Play one game between ``seats`` (first seat first) under game id ``uid``, from
        ``opening`` (book moves, long form) when given."""
        labels = {**labels, "sandbox": self.terms.isolation.value}
        if all(v.source_kind is not SourceKind.REMOTE for v in seats):
            t = self.terms
            result = await play_match(
                [launch_spec(v) for v in seats],
                t.game,
                time_control=t.time_control,
                memory_mb=t.memory_mb,
                observer=observer,
                connect_timeout=t.connect_timeout,
                labels=labels,
                game_id=uid,
                opening=opening,
                isolation=t.isolation,
            )
            return Played(result.report, [result.output(i) for i in range(2)])
        # A remote seat: every seat plays through the server, launched bots included.
        assert self.server is not None and self.seats is not None
        launched: list[LaunchedBot | None] = [None, None]
        tokens: list[str] = []
        relays: list[SocketRelay] = []
        try:
            wanted = await self._launch_seats(seats, uid, launched, tokens, relays)
            limits = [
                self.terms.remote_timeout if bot is None else self.terms.connect_timeout
                for bot in launched
            ]
            sessions = await self.seats.take(wanted, limits, launched)
            if any(s is None for s in sessions):
                absent = [i for i, s in enumerate(sessions) if s is None and launched[i] is None]
                report = self.unplayed(seats, sessions, uid, labels, launched)
                if absent and self.on_absent is not None:
                    self.on_absent(seats, absent, labels, report)
                return Played(report, absent=absent)
            found = [s for s in sessions if s is not None]
            report = await self._run(found, launched, uid, labels, observer, opening)
            await self.server.sessions.notify()
            for s, bot in zip(found, launched, strict=True):
                if bot is not None:
                    await s.goodbye("the game is over")
            note_launched(report, launched)
            outputs = [bot.output.text() if bot is not None else "" for bot in launched]
            return Played(report, outputs)
        finally:
            await self._release(launched, tokens, relays)

    async def _release(
        self, launched: list[LaunchedBot | None], tokens: list[str], relays: list[SocketRelay]
    ) -> None:
        """After a game on the server: its one-game tokens revoked, its bots and sockets
        stopped."""
        issuer = self.server.tokens if self.server is not None else None
        for token in tokens:
            if issuer is not None:
                issuer.revoke(token)
        await asyncio.gather(*(b.stop() for b in launched if b is not None), return_exceptions=True)
        await asyncio.gather(*(r.close() for r in relays), return_exceptions=True)

    def _launch_address(self) -> str:
        """Where a launched bot reaches the server: sandboxed, its ``unix:`` socket."""
        assert self.server is not None
        addresses = self.server.addresses()
        if self.terms.isolation is not Isolation.BWRAP:
            return addresses[0]
        for address in addresses:
            if address.startswith("unix:"):
                return address
        raise ValueError("sandboxed bots need the server to listen on a unix: socket too")

    async def _launch_seats(
        self,
        seats: Sequence[BotVersionInfo],
        uid: str,
        launched: list[LaunchedBot | None],
        tokens: list[str],
        relays: list[SocketRelay],
    ) -> list[SessionTest]:
        """Launch the seats that are not remote, each with a one-game token and, sandboxed,
        its own socket for this game (kept in ``launched``, ``tokens`` and ``relays`` as they
        start, for the caller to clean up); returns how to recognise each seat's session."""
        assert self.server is not None and self.seats is not None
        issuer = self.server.tokens
        wanted: list[SessionTest] = []
        for seat, v in enumerate(seats):
            if v.source_kind is SourceKind.REMOTE:
                wanted.append(self.seats.remote(v))
                continue
            if issuer is None:
                raise ValueError("launched bots on a server need LaunchTokens as its auth")
            player = f"launch:{uid}:{seat}"
            token = issuer.issue(player)
            tokens.append(token)
            address = self._launch_address()
            if self.terms.isolation is Isolation.BWRAP:
                relays.append(SocketRelay(address))
                address = await relays[-1].start()
            launched[seat] = await launch(
                launch_spec(v),
                address,
                token,
                memory_mb=self.terms.memory_mb,
                isolation=self.terms.isolation,
            )
            wanted.append(player_is(player))
        return wanted

    async def _run(
        self,
        sessions: Sequence[BotSession],
        launched: Sequence[LaunchedBot | None],
        uid: str,
        labels: dict[str, str],
        observer: Observer | None,
        opening: Sequence[str] = (),
    ) -> GameReport:
        assert self.seats is not None
        t = self.terms
        try:
            runner = MatchRunner(
                t.game,
                list(sessions),
                time_control=t.time_control,
                memory_limit_bytes=t.memory_limit_bytes,
                game_id=uid,
                labels=labels,
                observer=observer,
                # The sandbox measures launched bots; remote ones only report.
                self_reported_memory=[bot is None for bot in launched],
                opening=opening,
                cpu_meters=cpu_meters(launched),
                seeds=[None if bot is None else bot.seed for bot in launched],
            )
        finally:
            self.seats.release(sessions)
        watchers = watch_launched(runner, launched)
        try:
            return await runner.run()
        finally:
            for task in watchers:
                task.cancel()

    def unplayed(
        self,
        seats: Sequence[BotVersionInfo],
        sessions: Sequence[BotSession | None],
        uid: str,
        labels: dict[str, str],
        launched: Sequence[LaunchedBot | None] = (None, None),
    ) -> GameReport:
        """The report of a game that could not start because a seat has no session."""
        t = self.terms
        missing = [i for i, s in enumerate(sessions) if s is None]
        # How long each seat was waited for: a launched bot's connect time, a remote one's.
        waited = [t.connect_timeout if bot is not None else t.remote_timeout for bot in launched]
        end = unplayed_end(t.game.seat_names, missing, launched, [v.label for v in seats], waited)
        return unplayed_report(
            t.game,
            end,
            [SeatReport(v.bot_name, v.version) for v in seats],
            game_id=uid,
            time_control=t.time_control,
            memory_limit_bytes=t.memory_limit_bytes,
            labels=labels,
        )
