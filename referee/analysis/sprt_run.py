"""Playing an SPRT: game pairs between two bots until the test decides.

How one game is played is the caller's :data:`PlayGame` (launched bots on a private referee:
:func:`launched_games`; remote bots on a server: ``referee sprt`` uses the tournament's
:class:`referee.play.game.GamePlayer`).

Each pair starts from one opening of the book (in book order) and plays it twice with the
seats swapped; NEW's points over the pair go to the test. ``concurrency`` pairs run at once;
once the test decides, pairs still running are stopped and not counted (their games are
aborted, never stored). A game aborted by the referee (not a forfeit: those count as
losses) makes its pair be played again, at most ``MAX_PAIR_ATTEMPTS`` times.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from engine.adjudication.verdicts import Verdict
from engine.game import Game
from engine.records.openings import Book, opening_labels
from referee.analysis.sprt import Decision, Sprt
from referee.match.clock import TimeControl
from referee.match.runner import GameReport
from referee.play.local import play_match
from referee.sandbox.isolation import Isolation
from referee.sandbox.launch import BotSpec

MAX_PAIR_ATTEMPTS = 3


@dataclass(slots=True)
class PairResult:
    """One finished pair: its number, opening and NEW's points (0 to 2)."""

    number: int
    opening: str
    points: float
    reports: list[GameReport] = field(default_factory=list)


#: Plays one game of a pair: (NEW's seat, labels, the opening's moves) -> its report.
PlayGame = Callable[[int, dict[str, str], Sequence[str]], Awaitable[GameReport]]


def launched_games(
    specs: Sequence[BotSpec],
    game: Game[Any],
    *,
    time_control: TimeControl | None = None,
    memory_mb: float | None = None,
    isolation: Isolation | None = None,
) -> PlayGame:
    """Games between two launched bots (NEW is ``specs[0]``), each on a private referee,
    contained as ``isolation`` says (default: the sandbox where it works here)."""

    async def play(new_seat: int, labels: dict[str, str], opening: Sequence[str]) -> GameReport:
        seats = [specs[0], specs[1]] if new_seat == 0 else [specs[1], specs[0]]
        result = await play_match(
            seats,
            game,
            time_control=time_control,
            memory_mb=memory_mb,
            labels=labels,
            opening=opening,
            isolation=isolation,
        )
        return result.report

    return play


#: Called with each finished game (its report, the seat of NEW) for storage.
GameSink = Callable[[GameReport, int, datetime, datetime], None]


async def play_pair(
    play_game: PlayGame,
    number: int,
    *,
    book: Book | None,
    labels: dict[str, str],
    sink: GameSink | None = None,
) -> PairResult | None:
    """Play pair ``number``; ``None`` if its games kept being aborted."""
    opening = book.pick(number) if book is not None else None
    pair_labels = dict(labels, pair=str(number + 1))
    if opening is not None and book is not None:
        pair_labels.update(opening_labels(opening, book))
    for _ in range(MAX_PAIR_ATTEMPTS):
        points = 0.0
        reports = []
        for new_seat in (0, 1):
            started = datetime.now(UTC)
            moves = opening.moves if opening is not None else ()
            report = await play_game(new_seat, pair_labels, moves)
            end = report.end
            if end is None or end.verdict is Verdict.ABORTED:
                break
            if sink is not None:
                sink(report, new_seat, started, datetime.now(UTC))
            reports.append(report)
            points += 0.5 if end.winner is None else 1.0 if end.winner == new_seat else 0.0
        else:
            return PairResult(number, opening.id if opening else "", points, reports)
    return None


async def run_sprt(
    test: Sprt,
    play_game: PlayGame,
    *,
    book: Book | None,
    concurrency: int = 1,
    max_pairs: int | None = None,
    labels: dict[str, str] | None = None,
    on_pair: Callable[[PairResult, Sprt], None] | None = None,
    sink: GameSink | None = None,
) -> Decision:
    """Play pairs until ``test`` decides (or ``max_pairs`` are counted); the decision."""
    next_number = 0
    lock = asyncio.Lock()

    async def worker() -> None:
        nonlocal next_number
        while True:
            async with lock:
                if test.decision is not Decision.CONTINUE:
                    return
                if max_pairs is not None and next_number >= max_pairs:
                    return
                number = next_number
                next_number += 1
            pair = await play_pair(
                play_game,
                number,
                book=book,
                labels=labels or {},
                sink=sink,
            )
            if pair is None or test.decision is not Decision.CONTINUE:
                continue
            test.add_pair(pair.points)
            if on_pair is not None:
                on_pair(pair, test)

    await _until_decided([asyncio.create_task(worker()) for _ in range(max(1, concurrency))], test)
    return test.decision


async def _until_decided(tasks: list[asyncio.Task[None]], test: Sprt) -> None:
    """Wait for the workers; once the test decides, the others are stopped at once."""
    try:
        while tasks:
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()
            tasks = list(pending)
            if test.decision is not Decision.CONTINUE:
                break
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
