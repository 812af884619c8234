"""What a launcher knows about a bot's process, turned into verdicts for its game.

A bot the referee launched is measured from outside (memory, how its process ended, what it
printed). This module watches those processes during a game, explains a fault the stream alone
cannot (a disconnect whose process crashed is a runtime error), and decides the end of a game
that never started because a seat did not connect: ``referee match`` and tournaments both use
it, so the same missing bot gets the same verdict everywhere.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from engine.adjudication import verdicts
from engine.adjudication.verdicts import GameEnd, Verdict
from referee.match.report import GameReport
from referee.match.runner import MatchRunner
from referee.match.seat import EventKind, Seat
from referee.match.timing import CpuMeter
from referee.sandbox.launch import LaunchedBot


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


def unplayed_end(
    seat_names: Sequence[str],
    missing: Sequence[int],
    launched: Sequence[LaunchedBot | None],
    labels: Sequence[str] = (),
    waited_s: Sequence[float | None] = (),
) -> GameEnd:
    """The end of a game that could not start because the ``missing`` seats never connected.

    Both missing: aborted (no result), unless one is a remote bot that was given up on while
    the other was launched here and is still starting: then the remote one loses, a launched
    opponent is never blamed for its own start-up time. One missing: it loses, by MLE or a
    runtime error when its launched process already ended, else by a disconnect.
    """
    if len(missing) >= 2:
        seat = _given_up(launched)
        if seat is None:
            return verdicts.aborted("neither bot connected")
    else:
        seat = missing[0]
    name = seat_names[seat]
    who = f"{name} ({labels[seat]})" if seat < len(labels) and labels[seat] else name
    bot = launched[seat] if seat < len(launched) else None
    if bot is not None and bot.returncode is not None:
        if bot.memory_exceeded:
            return verdicts.fault(Verdict.MEMORY, seat, memory_fault_sentence(name, bot))
        tail = bot.output.tail(1).strip()
        sentence = f"{who}'s bot exited before connecting ({bot.describe_exit()})"
        return verdicts.fault(
            Verdict.RUNTIME_ERROR, seat, sentence + (f": {tail[:200]}" if tail else "")
        )
    wait = waited_s[seat] if seat < len(waited_s) else None
    waited = f" (waited {wait:g} s)" if wait is not None else ""
    return verdicts.fault(Verdict.DISCONNECT, seat, f"{who} did not connect in time{waited}")


def _given_up(launched: Sequence[LaunchedBot | None]) -> int | None:
    """With both seats missing: the remote seat, if the other one's process is still starting."""
    bots = [launched[s] if s < len(launched) else None for s in (0, 1)]
    for seat in (0, 1):
        other = bots[1 - seat]
        if bots[seat] is None and other is not None and other.returncode is None:
            return seat
    return None


def cpu_meters(bots: Sequence[LaunchedBot | None]) -> list[CpuMeter | None]:
    """Per seat, the CPU meter of its launched bot (``None`` for a remote seat)."""
    return [None if bot is None else bot.cpu_seconds for bot in bots]


def note_launched(report: GameReport, bots: Sequence[LaunchedBot | None]) -> None:
    """Put what the sandbox measured about each launched bot into the report."""
    for seat_report, bot in zip(report.seats, bots, strict=False):
        if bot is None:
            continue
        if seat_report.cpu_used_s is not None:
            seat_report.cpu_method = bot.cpu_method
        seat_report.sampled_rss_bytes = bot.peak_rss_bytes
        seat_report.memory_method = bot.memory_method
        seat_report.memory_layers = bot.measurement
        seat_report.exit = bot.describe_exit()
        seat_report.output = bot.output.text()


async def explain_fault(
    end: GameEnd, bots: Sequence[LaunchedBot | None], seat_names: Sequence[str]
) -> GameEnd:
    """A disconnect by a bot whose process died is a crash (or an MLE): say so."""
    if end.verdict is not Verdict.DISCONNECT or end.offender is None:
        return end
    bot = bots[end.offender] if end.offender < len(bots) else None
    if bot is None:
        return end
    code = await bot.wait(1.0)
    name = seat_names[end.offender]
    if bot.memory_exceeded:
        return verdicts.fault(Verdict.MEMORY, end.offender, memory_fault_sentence(name, bot))
    if code is None:
        refused = bot.proc.tasks_refused
        if refused:  # a fork bomb takes the bot's own threads down with its connection
            cap = f"its limit of {bot.proc.max_tasks} processes and threads ({refused} refused)"
            return verdicts.fault(end.verdict, end.offender, f"{end.reason}, after reaching {cap}")
        return end
    return verdicts.fault(Verdict.RUNTIME_ERROR, end.offender, crash_sentence(name, bot))


def watch_launched(
    runner: MatchRunner[Seat], bots: Sequence[LaunchedBot | None]
) -> list[asyncio.Task[None]]:
    """Tasks that end ``runner``'s game when a launched seat's process breaks its memory
    limit or dies (cancel them once the game is over)."""
    return [
        asyncio.create_task(_watch(runner, seat, bot, runner.seat_names[seat]))
        for seat, bot in enumerate(bots)
        if bot is not None
    ]


async def _watch(runner: MatchRunner[Seat], seat: int, bot: LaunchedBot, name: str) -> None:
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
