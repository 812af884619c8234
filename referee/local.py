"""One game between two launched bots on a private local server (what ``referee match`` runs).

The server listens on 127.0.0.1 on a free port and accepts exactly two tokens, one per seat,
so each bot process lands in its own seat. Both run under the sandbox (memory limit, bounded
output capture): a bot whose process breaks its memory limit loses by MLE with its peak, one
whose process dies loses by a runtime error saying how it ended. Every process started here is
stopped before :func:`play_match` returns, whatever happened (also when the caller is
cancelled); a ``shutdown`` event gives the game ``shutdown_grace`` seconds to finish, after which
it is recorded as aborted.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.game import Game
from referee import verdicts
from referee.auth import TokenTable
from referee.clock import TimeControl
from referee.launch import DEFAULT_MEMORY_MB, BotSpec, LaunchedBot, launch, stop_all
from referee.logging import get_logger
from referee.match import GameReport, MatchRunner, Observer, SeatReport, new_game_id
from referee.server import RESUME_WINDOW_S, RefereeServer
from referee.session import BotSession, EventKind
from referee.verdicts import GameEnd, Verdict

log = get_logger("referee.local")


@dataclass(slots=True)
class MatchResult:
    """The finished game and the processes that played it (already stopped)."""

    report: GameReport
    bots: list[LaunchedBot]

    def output(self, seat: int) -> str:
        """What the seat's bot printed (bounded)."""
        return self.bots[seat].output.text() if seat < len(self.bots) else ""


async def play_match(
    specs: Sequence[BotSpec],
    game: Game[Any],
    *,
    time_control: TimeControl | None = None,
    memory_mb: float | None = DEFAULT_MEMORY_MB,
    observer: Observer | None = None,
    connect_timeout: float = 30.0,
    labels: dict[str, str] | None = None,
    game_id: str | None = None,
    resume_window: float = RESUME_WINDOW_S,
    shutdown: asyncio.Event | None = None,
    shutdown_grace: float = 5.0,
) -> MatchResult:
    """Launch both bots, referee one game between them, and clean up."""
    tokens = [secrets.token_hex(16) for _ in specs]
    server = RefereeServer(
        auth=TokenTable({token: f"seat{i}" for i, token in enumerate(tokens)}),
        games=[game.name],
        resume_window=resume_window,
    )
    address = await server.start("127.0.0.1:0")
    bots: list[LaunchedBot] = []
    memory_bytes = int(memory_mb * 1024 * 1024) if memory_mb else 0
    game_id = game_id or new_game_id()
    watchers: list[asyncio.Task[None]] = []
    try:
        for spec, token in zip(specs, tokens, strict=True):
            bots.append(await launch(spec, address, token, memory_mb=memory_mb))
        waits = [
            _await_session(server, bot, f"seat{i}", connect_timeout) for i, bot in enumerate(bots)
        ]
        found = await _unless_shutdown(asyncio.gather(*waits), shutdown)
        missing = [] if found is not None else [0, 1]
        if found is not None:
            missing = [i for i, s in enumerate(found) if s is None]
        if missing:
            report = _unplayed(
                game, specs, bots, found or [None, None], missing, time_control, memory_bytes
            )
            if found is None:
                report.end = verdicts.aborted("the referee was shut down before the game started")
            report.game_id = game_id
        else:
            assert found is not None
            sessions = [s for s in found if s is not None]

            async def refine(end: GameEnd) -> GameEnd:
                return await _explain_fault(end, bots, game.seat_names)

            runner = MatchRunner(
                game,
                sessions,
                time_control=time_control,
                memory_limit_bytes=memory_bytes,
                game_id=game_id,
                labels=labels,
                observer=observer,
                refine=refine,
                # The sandbox measures launched bots; their own reports are only recorded.
                self_reported_memory=(False, False),
            )
            watchers = watch_launched(runner, bots)
            if shutdown is not None:
                watchers.append(asyncio.create_task(_abort_on(shutdown, shutdown_grace, runner)))
            report = await runner.run()
            for task in watchers:
                task.cancel()
            await asyncio.gather(*(s.goodbye("the match is over") for s in sessions))
            # Give well-behaved bots a moment to exit on their own before they are stopped.
            await asyncio.gather(*(bot.wait(2.0) for bot in bots))
    finally:
        for task in watchers:
            task.cancel()
        await asyncio.shield(_cleanup(bots, server))
    note_launched(report, bots)
    return MatchResult(report, bots)


async def _cleanup(bots: list[LaunchedBot], server: RefereeServer) -> None:
    await stop_all(bots)
    await server.stop(0.5)


def note_launched(report: GameReport, bots: Sequence[LaunchedBot | None]) -> None:
    """Put what the sandbox measured about each launched bot into the report."""
    for seat_report, bot in zip(report.seats, bots, strict=False):
        if bot is None:
            continue
        seat_report.sampled_rss_bytes = bot.peak_rss_bytes
        seat_report.memory_method = bot.memory_method
        seat_report.memory_layers = bot.measurement
        seat_report.exit = bot.describe_exit()
        seat_report.output = bot.output.text()


async def _unless_shutdown(work: Any, shutdown: asyncio.Event | None) -> Any:
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


async def _abort_on(shutdown: asyncio.Event, grace: float, runner: MatchRunner) -> None:
    await shutdown.wait()
    log.info("shutdown_requested", grace=grace, game_id=runner.game_id)
    await asyncio.sleep(grace)
    runner.abort(f"the referee was shut down (the game did not finish within {grace:g} s)")


def watch_launched(
    runner: MatchRunner, bots: Sequence[LaunchedBot | None]
) -> list[asyncio.Task[None]]:
    """Tasks that end ``runner``'s game when a launched seat's process breaks its memory
    limit or dies (cancel them once the game is over)."""
    return [
        asyncio.create_task(_watch(runner, seat, bot, runner.seat_names[seat]))
        for seat, bot in enumerate(bots)
        if bot is not None
    ]


async def _watch(runner: MatchRunner, seat: int, bot: LaunchedBot, name: str) -> None:
    """End the game as soon as the bot's process breaks its memory limit or dies."""
    exceeded = asyncio.create_task(bot.proc.wait_memory_exceeded())
    exited = asyncio.create_task(bot.wait_exit())
    try:
        await asyncio.wait({exceeded, exited}, return_when=asyncio.FIRST_COMPLETED)
        if bot.memory_exceeded or (await bot.wait(0.5) is not None and bot.memory_exceeded):
            runner.inject(seat, EventKind.MEMORY, memory_fault_sentence(name, bot))
        else:
            await exited
            runner.inject(seat, EventKind.EXITED, crash_sentence(name, bot))
    finally:
        for task in (exceeded, exited):
            task.cancel()


def memory_fault_sentence(name: str, bot: LaunchedBot) -> str:
    """E.g. ``BLUE exceeded its memory: peak 263.1 MB of 250 MB (rss_poll)``."""
    how = bot.memory_method
    if bot.proc.memory_verdict == "memory_error":
        how += "; an allocation was refused: MemoryError"
    elif bot.proc.memory_verdict == "cgroup_oom":
        how += "; killed by the kernel"
    return verdicts.memory_sentence(name, bot.peak_rss_bytes, bot.memory_limit_bytes, how)


def crash_sentence(name: str, bot: LaunchedBot) -> str:
    """E.g. ``RED's bot crashed (killed by signal SIGSEGV ...): <last line of its output>``."""
    tail = bot.output.tail(1).strip()
    reason = f"{name}'s bot crashed ({bot.describe_exit()})"
    if tail:
        reason += f": {tail[:200]}"
    return reason + " (its output is kept with the game)"


async def _await_session(
    server: RefereeServer, bot: LaunchedBot, player: str, timeout: float
) -> BotSession | None:
    """The bot's session once it connected; ``None`` if it exited or timed out first."""
    waiter = asyncio.create_task(
        server.lobby.wait_for(lambda s: s.identity.player_id == player, timeout)
    )
    exited = asyncio.create_task(bot.wait_exit())
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


def _unplayed(
    game: Game[Any],
    specs: Sequence[BotSpec],
    bots: Sequence[LaunchedBot],
    sessions: Sequence[BotSession | None],
    missing: Sequence[int],
    time_control: TimeControl | None,
    memory_bytes: int,
) -> GameReport:
    names = game.seat_names
    if len(missing) == 2:
        end = verdicts.aborted("neither bot connected")
    else:
        seat = missing[0]
        bot = bots[seat]
        if bot.returncode is not None:
            if bot.memory_exceeded:
                end = verdicts.fault(Verdict.MEMORY, seat, memory_fault_sentence(names[seat], bot))
            else:
                tail = bot.output.tail(1)
                end = verdicts.fault(
                    Verdict.RUNTIME_ERROR,
                    seat,
                    f"{names[seat]}'s bot exited before connecting ({bot.describe_exit()})"
                    + (f": {tail}" if tail else ""),
                )
        else:
            end = verdicts.fault(
                Verdict.DISCONNECT, seat, f"{names[seat]}'s bot did not connect in time"
            )
    seats = []
    for spec, session in zip(specs, sessions, strict=True):
        seats.append(
            SeatReport(session.name if session else spec.label, session.version if session else "")
        )
    state = game.new_state()
    report = GameReport(
        game_id="",
        game=game.name,
        params=dict(game.params),
        seat_names=(names[0], names[1]),
        seats=seats,
        time_control=time_control or TimeControl(),
        memory_limit_bytes=memory_bytes,
        initial_position=state.to_string(),
        started_at="",
        final_position=state.to_string(),
        end=end,
    )
    for session in sessions:
        if session is not None:
            session.close("the match did not start")
    return report


async def _explain_fault(
    end: GameEnd, bots: Sequence[LaunchedBot], seat_names: Sequence[str]
) -> GameEnd:
    """A disconnect by a bot whose process died is a crash (or an MLE): say so."""
    if end.verdict is not Verdict.DISCONNECT or end.offender is None:
        return end
    bot = bots[end.offender]
    code = await bot.wait(1.0)
    name = seat_names[end.offender]
    if bot.memory_exceeded:
        return verdicts.fault(Verdict.MEMORY, end.offender, memory_fault_sentence(name, bot))
    if code is None:
        return end
    return verdicts.fault(Verdict.RUNTIME_ERROR, end.offender, crash_sentence(name, bot))
