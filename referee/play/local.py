"""A real referee on this machine with launched bots, shipped as a test double (as httpx ships
its mock transport); ``referee match`` runs on it too (see docs/referee.md):

    async with local_referee() as ref:
        result = await ref.play(load_game("tetress"), [BotSpec("sdk", "a/"), BotSpec("sdk", "b/")])

It listens on 127.0.0.1 on a free port and takes only the tokens it issues (one-game tokens: one
session each), so each bot lands in its own seat. Bots run in the sandbox (docs/sandbox.md)
where it works here, reaching the referee through a Unix socket in a private folder, each with
its code copied for the game (never the other seats' folders); the isolation in force is in
every game's ``sandbox`` label. A process over its memory limit loses by MLE, one that dies by
a runtime error saying how. Every process started here is stopped when the block exits,
whatever happened (also on cancellation).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, TypeVar, Unpack

from engine.adjudication import verdicts
from engine.adjudication.verdicts import GameEnd
from engine.game import Game
from referee.errors import RefereeError
from referee.match.clock import TimeControl
from referee.match.launched import (
    cpu_meters,
    crash_sentence,
    explain_fault,
    memory_fault_sentence,
    note_launched,
    unplayed_end,
    watch_launched,
)
from referee.match.report import GameReport, SeatReport, unplayed_report
from referee.match.result import MatchResult
from referee.match.runner import MatchRunner, Observer, new_game_id
from referee.match.seat import Seat
from referee.sandbox.botcode import bot_roots
from referee.sandbox.isolation import Isolation, choose
from referee.sandbox.launch import DEFAULT_MEMORY_MB, BotSpec, LaunchedBot, launch, stop_all
from referee.sandbox.leftovers import sweep_once
from referee.server.app import RESUME_WINDOW_S, RefereeServer
from referee.server.auth import LaunchTokens, TokenTable
from referee.server.session import BotSession
from referee.server.transport import KEEPALIVE_TIME_S, KEEPALIVE_TIMEOUT_S
from referee.telemetry.logs import get_logger

__all__ = [
    "BotDidNotConnect",
    "LocalReferee",
    "MatchResult",
    "PlayOptions",
    "crash_sentence",
    "local_referee",
    "memory_fault_sentence",
    "note_launched",
    "play_match",
    "watch_launched",
]

log = get_logger("referee.play.local")

_T = TypeVar("_T")


class BotDidNotConnect(RefereeError):
    """A bot exited or timed out before its session opened (the message holds its output)."""


class LocalReferee:
    """A running referee (``server`` at ``address``) and the bots launched onto it."""

    def __init__(
        self, server: RefereeServer, auth: LaunchTokens, isolation: Isolation = Isolation.NONE
    ) -> None:
        self.server = server
        #: Its sessions, where a launched bot's session is waited for.
        self.sessions = server.handle().sessions
        self.address = server.addresses[0]
        #: How launched bots are contained; sandboxed ones connect to :attr:`bot_address`.
        self.isolation = isolation
        self.bot_address = server.addresses[-1] if isolation is Isolation.BWRAP else self.address
        #: Every bot launched here; all are stopped when the ``local_referee`` block exits.
        self.bots: list[LaunchedBot] = []
        self._auth = auth

    def token(self, player: str) -> str:
        """A new token whose sessions carry ``player`` as their player id."""
        return self._auth.issue(player)

    async def launch(
        self,
        spec: BotSpec,
        player: str,
        *,
        memory_mb: float | None = DEFAULT_MEMORY_MB,
        address: str | None = None,
        exclude: Sequence[Path] = (),
    ) -> LaunchedBot:
        """Start ``spec`` as ``player``, connecting to ``address`` (default: this referee;
        e.g. a TCP proxy in front of it, which only an uncontained bot can reach), its code
        copied without the folders in ``exclude``."""
        token = self.token(player)
        isolation = self.isolation
        if address is not None and not address.startswith("unix:"):
            isolation = Isolation.NONE  # the sandbox has no network
        bot = await launch(
            spec,
            address or self.bot_address,
            token,
            memory_mb=memory_mb,
            isolation=isolation,
            exclude=exclude,
        )
        self.bots.append(bot)
        return bot

    async def session(
        self, player: str, bot: LaunchedBot | None = None, timeout: float = 30.0
    ) -> BotSession:
        """``player``'s session once it is open; :class:`BotDidNotConnect` if ``bot`` exits
        first or ``timeout`` passes."""
        found = await self._await_session(player, bot, timeout)
        if found is None:
            printed = bot.output.text() if bot is not None else ""
            raise BotDidNotConnect(f"{player} did not connect within {timeout:g} s:\n{printed}")
        return found

    async def connect(
        self, spec: BotSpec, player: str, *, timeout: float = 30.0, **launch_options: Any
    ) -> tuple[LaunchedBot, BotSession]:
        """Launch ``spec`` as ``player`` and wait for its session."""
        bot = await self.launch(spec, player, **launch_options)
        return bot, await self.session(player, bot, timeout)

    async def play(
        self,
        game: Game[Any],
        specs: Sequence[BotSpec],
        *,
        time_control: TimeControl | None = None,
        memory_mb: float | None = DEFAULT_MEMORY_MB,
        observer: Observer | None = None,
        connect_timeout: float = 30.0,
        labels: dict[str, str] | None = None,
        game_id: str | None = None,
        remote: Sequence[bool] = (False, False),
        via: Sequence[str | None] = (None, None),
        shutdown: asyncio.Event | None = None,
        shutdown_grace: float = 5.0,
        on_launched: Callable[[Sequence[LaunchedBot]], None] | None = None,
        opening: Sequence[str] = (),
    ) -> MatchResult:
        """Launch both bots, referee one game between them, stop them, and return the game.

        A ``remote`` seat is refereed as a bot this referee did not launch (its own memory
        reports are judged, its process is not watched); ``via`` gives a seat another address
        to connect to (a proxy). A seat that never connects loses (or, both missing, the game
        is aborted); ``shutdown`` gives the game ``shutdown_grace`` seconds, then aborts it.
        ``on_launched`` is given the launched bots (seat order) before the game starts, e.g.
        to show their output as it comes; ``opening`` (book moves) is played first."""
        game_id = game_id or new_game_id()
        labels = {**(labels or {}), "sandbox": self.isolation.value}
        memory = int((memory_mb or 0) * 1024 * 1024)
        setup = _Setup(game, game_id, time_control, memory, labels, tuple(remote), tuple(opening))
        roots = [bot_roots(spec.kind, spec.value) for spec in specs]
        bots: list[LaunchedBot] = []
        try:
            await self._launch_seats(specs, roots, game_id, memory_mb, via, bots)
            if on_launched is not None:
                on_launched(bots)
            waits = [
                self._await_session(_player(game_id, seat), bot, connect_timeout)
                for seat, bot in enumerate(bots)
            ]
            found = await _unless_shutdown(asyncio.gather(*waits), shutdown)
            if found is None or None in found:
                report = _not_started(setup, specs, bots, found)
            else:
                sessions = [s for s in found if s is not None]
                report = await _play(setup, sessions, bots, observer, shutdown, shutdown_grace)
        finally:
            await asyncio.shield(stop_all(bots))
        note_launched(report, setup.watched(bots))
        return MatchResult(report, bots)

    async def _launch_seats(
        self,
        specs: Sequence[BotSpec],
        roots: Sequence[Sequence[Path]],
        game_id: str,
        memory_mb: float | None,
        via: Sequence[str | None],
        bots: list[LaunchedBot],
    ) -> None:
        """Launch each seat's bot into ``bots`` (a failed launch leaves the bots already
        launched there to be stopped); no bot is let into another's ``roots``."""
        for seat, spec in enumerate(specs):
            others = [root for i, rs in enumerate(roots) if i != seat for root in rs]
            bot = await self.launch(
                spec,
                _player(game_id, seat),
                memory_mb=memory_mb,
                address=via[seat],
                exclude=others,
            )
            bots.append(bot)

    async def _await_session(
        self, player: str, bot: LaunchedBot | None, timeout: float
    ) -> BotSession | None:
        """The session of ``player`` once open; ``None`` if ``bot`` exited or time ran out."""
        lobby = self.sessions
        waiter = asyncio.create_task(
            lobby.wait_for(lambda s: s.identity.player_id == player, timeout)
        )
        exited = asyncio.create_task(bot.wait_exit() if bot is not None else _forever())
        try:
            done, _ = await asyncio.wait({waiter, exited}, return_when=asyncio.FIRST_COMPLETED)
            if waiter in done and waiter.exception() is None:
                return waiter.result()
            return None
        finally:
            for task in (waiter, exited):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                    await task


@contextlib.asynccontextmanager
async def local_referee(
    *,
    games: Iterable[str] | None = None,
    tokens: Mapping[str, str] | None = None,
    resume_window: float = RESUME_WINDOW_S,
    keepalive_s: float | None = None,
    address: str = "127.0.0.1:0",
    isolation: Isolation | None = None,
) -> AsyncIterator[LocalReferee]:
    """A referee serving ``games`` (default: all) on ``address`` until the block exits, then
    every bot launched on it is stopped and the server with it.

    It accepts the tokens it issues (:meth:`LocalReferee.token`) and the fixed ``tokens``
    (token -> player id); ``resume_window`` is the server's reconnect window, and
    ``keepalive_s`` (default: the server's) both the quiet time before a keep-alive ping and
    how long its answer may take. ``isolation``: how launched bots are contained (default:
    the sandbox where it works here; sandboxed bots get a private Unix socket)."""
    isolation = choose() if isolation is None else isolation
    sweep_once()  # the game folders an earlier run of ours left when it was killed
    auth = LaunchTokens(TokenTable(tokens) if tokens else None)
    server = RefereeServer(
        auth=auth,
        games=games,
        resume_window=resume_window,
        keepalive_time_s=keepalive_s or KEEPALIVE_TIME_S,
        keepalive_timeout_s=keepalive_s or KEEPALIVE_TIMEOUT_S,
    )
    await server.start(address, private_socket=isolation is Isolation.BWRAP)
    referee = LocalReferee(server, auth, isolation)
    try:
        yield referee
    finally:
        await asyncio.shield(_cleanup(referee.bots, server))


class PlayOptions(TypedDict, total=False):
    """What :func:`play_match` passes on to :meth:`LocalReferee.play` (whose defaults hold)."""

    time_control: TimeControl | None
    memory_mb: float | None
    observer: Observer | None
    connect_timeout: float
    labels: dict[str, str] | None
    game_id: str | None
    shutdown: asyncio.Event | None
    shutdown_grace: float
    on_launched: Callable[[Sequence[LaunchedBot]], None] | None
    opening: Sequence[str]


async def play_match(
    specs: Sequence[BotSpec],
    game: Game[Any],
    *,
    resume_window: float = RESUME_WINDOW_S,
    isolation: Isolation | None = None,
    **options: Unpack[PlayOptions],
) -> MatchResult:
    """One game between two launched bots on a private local referee (``referee match``);
    ``isolation`` as for :func:`local_referee`, ``options`` as for :meth:`LocalReferee.play`."""
    async with local_referee(
        games=[game.name], resume_window=resume_window, isolation=isolation
    ) as referee:
        return await referee.play(game, specs, **options)


@dataclass(frozen=True, slots=True)
class _Setup:
    """What one ``play`` was asked for, as its two outcomes need it."""

    game: Game[Any]
    game_id: str
    time_control: TimeControl | None
    memory_bytes: int
    labels: dict[str, str] | None
    remote: tuple[bool, ...]
    opening: tuple[str, ...] = ()  # book moves played for both seats first

    def watched(self, bots: Sequence[LaunchedBot]) -> list[LaunchedBot | None]:
        """The launched bots whose processes the referee judges (not the ``remote`` seats)."""
        return [None if self.remote[i] else bot for i, bot in enumerate(bots)]


def _player(game_id: str, seat: int) -> str:
    return f"local:{game_id}:{seat}"


def _not_started(
    setup: _Setup,
    specs: Sequence[BotSpec],
    bots: Sequence[LaunchedBot],
    found: Sequence[BotSession | None] | None,
) -> GameReport:
    """The report of a game whose bots did not both connect (``found``: ``None`` when the
    referee was shut down while waiting)."""
    sessions = found or [None, None]
    missing = [i for i, s in enumerate(sessions) if s is None]
    end = unplayed_end(setup.game.seat_names, missing, bots)
    if found is None:
        end = verdicts.aborted("the referee was shut down before the game started")
    seats = [
        SeatReport(s.name, s.version) if s else SeatReport(spec.label, "")
        for spec, s in zip(specs, sessions, strict=True)
    ]
    for session in sessions:
        if session is not None:
            session.close("the match did not start")
    return unplayed_report(
        setup.game,
        end,
        seats,
        game_id=setup.game_id,
        time_control=setup.time_control,
        memory_limit_bytes=setup.memory_bytes,
        labels=setup.labels,
    )


async def _play(
    setup: _Setup,
    sessions: list[BotSession],
    bots: list[LaunchedBot],
    observer: Observer | None,
    shutdown: asyncio.Event | None,
    shutdown_grace: float,
) -> GameReport:
    """Referee the game between the two connected bots, watching their processes."""
    game = setup.game
    watched = setup.watched(bots)

    async def refine(end: GameEnd) -> GameEnd:
        return await explain_fault(end, watched, game.seat_names)

    runner = MatchRunner(
        game,
        sessions,
        time_control=setup.time_control,
        memory_limit_bytes=setup.memory_bytes,
        game_id=setup.game_id,
        labels=setup.labels,
        observer=observer,
        refine=refine,
        # The sandbox measures launched bots; their own reports are only recorded.
        self_reported_memory=setup.remote,
        opening=setup.opening,
        cpu_meters=cpu_meters(watched),
        seeds=[None if bot is None else bot.seed for bot in watched],
    )
    watchers = watch_launched(runner, watched)
    if shutdown is not None:
        watchers.append(asyncio.create_task(_abort_on(shutdown, shutdown_grace, runner)))
    try:
        report = await runner.run()
    finally:
        for task in watchers:
            task.cancel()
    await asyncio.gather(*(s.goodbye("the match is over") for s in sessions))
    # Give well-behaved bots a moment to exit on their own before they are stopped.
    await asyncio.gather(*(bot.wait(2.0) for bot in bots))
    return report


async def _cleanup(bots: list[LaunchedBot], server: RefereeServer) -> None:
    await stop_all(bots)
    await server.stop(0.5)


async def _forever() -> None:
    await asyncio.Event().wait()


async def _unless_shutdown(work: Awaitable[_T], shutdown: asyncio.Event | None) -> _T | None:
    """``await work``, or ``None`` (work cancelled) once ``shutdown`` is set."""
    task = asyncio.ensure_future(work)
    if shutdown is None:
        return await task
    stopper = asyncio.create_task(shutdown.wait())
    try:
        done, _ = await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return None
    finally:
        stopper.cancel()


async def _abort_on(shutdown: asyncio.Event, grace: float, runner: MatchRunner[Seat]) -> None:
    await shutdown.wait()
    log.info("shutdown_requested", grace=grace, game_id=runner.game_id)
    await asyncio.sleep(grace)
    runner.abort(f"the referee was shut down (the game did not finish within {grace:g} s)")
