"""Casual pairing for ``referee serve``: any two free sessions that share a game play it.

Tournaments pair registered bots by their own schedule; this is the simple always-on mode (a
test ground for remote bots). Seats alternate between games of the same two bots.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from engine.game import Game
from referee.clock import TimeControl
from referee.lobby import Lobby
from referee.logging import get_logger
from referee.match import GameReport, MatchRunner
from referee.session import BotSession

log = get_logger("referee.matchmaker")


class Matchmaker:
    """Pairs free sessions from ``lobby`` and plays games until stopped."""

    def __init__(
        self,
        lobby: Lobby,
        games: Sequence[Game[Any]],
        *,
        time_control: TimeControl | None = None,
        memory_limit_bytes: int = 0,
        records_dir: str | None = None,
        on_report: Callable[[GameReport], None] | None = None,
        on_game: Callable[[MatchRunner, GameReport], None] | None = None,
    ) -> None:
        self.lobby = lobby
        self.games = list(games)
        self.time_control = time_control
        self.memory_limit_bytes = memory_limit_bytes
        self.records_dir = Path(records_dir) if records_dir else None
        self.on_report = on_report
        #: Also told which sessions played (e.g. to store the game for their registered bots).
        self.on_game = on_game
        self.running: set[asyncio.Task[GameReport]] = set()
        self.finished = 0
        self._pairings: Counter[tuple[str, str]] = Counter()
        self._accepting = True

    def stop_pairing(self) -> None:
        self._accepting = False

    async def run(self) -> None:
        """Pair and play until cancelled or :meth:`stop_pairing`; running games are awaited by
        :meth:`drain`."""
        while self._accepting:
            since = self.lobby.generation
            pair = self._find_pair()
            if pair is None:
                await self.lobby.wait_change(since)
                continue
            first, second, game = pair
            key = (first.session_id, second.session_id)
            if self._pairings[key] % 2:
                first, second = second, first
            self._pairings[key] += 1
            runner = MatchRunner(
                game,
                [first, second],
                time_control=self.time_control,
                memory_limit_bytes=self.memory_limit_bytes,
                labels={"mode": "casual"},
            )
            task = asyncio.create_task(self._play(runner))
            self.running.add(task)
            task.add_done_callback(self.running.discard)

    def _find_pair(self) -> tuple[BotSession, BotSession, Game[Any]] | None:
        free = [s for s in self.lobby.sessions() if s.is_free()]
        for i, first in enumerate(free):
            for second in free[i + 1 :]:
                for game in self.games:
                    if first.plays(game.name) and second.plays(game.name):
                        return first, second, game
        return None

    async def _play(self, runner: MatchRunner) -> GameReport:
        try:
            report = await runner.run()
        except asyncio.CancelledError:
            # Stopped at shutdown: the runner recorded it as aborted; keep that record too.
            if runner.report.end is not None:
                self._save(runner.report, runner.game)
            raise
        self.finished += 1
        self._save(report, runner.game)
        if self.on_report is not None:
            self.on_report(report)
        if self.on_game is not None:
            self.on_game(runner, report)
        await self.lobby.notify()
        return report

    def _save(self, report: GameReport, game: Game[Any]) -> None:
        if self.records_dir is None:
            return
        from referee.record import write_record_file

        try:
            self.records_dir.mkdir(parents=True, exist_ok=True)
            write_record_file(self.records_dir / f"{report.game_id}.pgn", report, game)
        except Exception:
            log.exception("record_failed", game_id=report.game_id)

    async def drain(self, grace: float) -> None:
        """Let running games finish for ``grace`` seconds, then stop the rest (aborted)."""
        if not self.running:
            return
        _, pending = await asyncio.wait(set(self.running), timeout=grace)
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError):
                await task
