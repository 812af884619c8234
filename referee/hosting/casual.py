"""Games between tournaments: ``referee serve --db`` stores the games its matchmaker pairs and
keeps the live ladder up to date with them.

A session is a registered bot when its token's owner (a stored player) owns a remote bot whose
Hello name it gives; a bot its owner has not registered yet is registered on its first game as
``owner/name@version`` (the Hello's name, scoped to its owner so that it never takes the name of
an instructor's entry or of another student's bot; version ``1`` when it gives none). Games of
open sessions (no stored player) and a bot against itself are not stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from engine.game import Game
from referee.hosting.casual_conduct import unrated
from referee.match.runner import GameReport, MatchRunner
from referee.play.bots import register_remote
from referee.play.store import Filing, store_game
from referee.server.session import BotSession
from referee.storage import (
    BotVersionInfo,
    ConflictError,
    NotFoundError,
    Repository,
    SourceKind,
)
from referee.storage.failures import describe
from referee.telemetry import metrics
from referee.telemetry.logs import get_logger
from referee.tournament.ladder import DEFAULT_LADDER, update_ladder

log = get_logger("referee.casual")
#: The longest wait between two tries to store a finished game while the database is away.
STORE_RETRY_MAX_S = 5.0


class CasualRecorder:
    """The matchmaker's ``on_game``: store each game, then refresh the ladder."""

    def __init__(
        self, repo: Repository, ladder: str = DEFAULT_LADDER, *, rate_channels: bool = False
    ) -> None:
        self.repo = repo
        #: Whether games played in a named channel or by challenge are stored and rated like
        #: open-pool games.
        self.rate_channels = rate_channels
        self.ladder = ladder
        self.stored = 0
        self._tasks: set[asyncio.Task[None]] = set()
        #: The games being stored (a void waits for them: it may name one of them).
        self._storing: set[asyncio.Task[None]] = set()
        self._ladder_due: set[str] = set()
        self._ladder_lock = asyncio.Lock()

    def on_game(
        self, runner: MatchRunner[BotSession], report: GameReport
    ) -> asyncio.Task[None] | None:
        """Store the game on a task of its own (returned; ``None``: a private game, not
        stored)."""
        private = any(s.channel for s in runner.sessions) or report.labels.get("mode") == (
            "challenge"
        )
        if not self.rate_channels and private:
            # A channel's or a challenge's games are the two students' own: not rated unless
            # the server says so (serve --rate-channels).
            log.info("private_game_not_rated", game_id=report.game_id)
            return None
        who = [(s.identity.player_id, s.identity.name, s.version) for s in runner.sessions]
        task = asyncio.get_running_loop().create_task(self._store(who, report, runner.game))
        self._tasks.add(task)
        self._storing.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(self._storing.discard)
        return task

    async def drain(self) -> None:
        """Wait until every finished game is stored."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _store(
        self, who: list[tuple[str | None, str, str]], report: GameReport, game: Game[Any]
    ) -> None:
        """Store a finished game; while the database is away, try again (every few seconds,
        until stored or the server stops), so a game finished during an outage is kept."""
        wait = 1.0
        while True:
            try:
                await self._store_once(who, report, game)
                return
            except Exception as exc:
                cause = describe(exc)
                if cause is None:
                    log.exception("casual_game_not_stored", game_id=report.game_id)
                    return
                log.warning("casual_game_store_waiting", game_id=report.game_id, reason=cause)
                metrics.database_reachable("casual_store", False)
            await asyncio.sleep(wait)
            wait = min(2 * wait, STORE_RETRY_MAX_S)

    async def _store_once(
        self, who: list[tuple[str | None, str, str]], report: GameReport, game: Game[Any]
    ) -> None:
        versions = [await asyncio.to_thread(self._version, *w) for w in who]
        if any(v is None for v in versions):
            return
        found = [v for v in versions if v is not None]
        if found[0].id == found[1].id:
            log.info("casual_self_play_not_stored", bot=found[0].label)
            return
        # Played by the matchmaker's runner: only the storing half of play_and_store. A win
        # over a bot that failed to answer again is kept, but rates no one.
        filing = Filing("casual", voided=unrated(report))
        try:
            await asyncio.to_thread(store_game, self.repo, report, game, found, filing)
        except ConflictError:
            # An earlier try committed but its answer was lost with the link: stored once.
            if not await asyncio.to_thread(self.repo.has_game, report.game_id):
                raise
        self.stored += 1
        metrics.database_reachable("casual_store", True)
        await self.refresh_ladder(game.name)

    def void(self, uids: Sequence[str]) -> None:
        """Void the stored games ``uids`` (a player's run of casual forfeits fed them) and
        rebuild their ladders; games still being stored are waited for first."""
        task = asyncio.get_running_loop().create_task(self._void(tuple(uids)))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _void(self, uids: tuple[str, ...]) -> None:
        await asyncio.gather(*self._storing, return_exceptions=True)
        try:
            games = await asyncio.to_thread(self.repo.void_games, uids)
            log.info("casual_games_voided", games=list(uids))
            for game in games:
                await self.refresh_ladder(game)
        except Exception:
            log.exception("casual_games_not_voided", games=list(uids))

    async def refresh_ladder(self, game: str) -> None:
        """Rebuild the ladder of ``game`` (also after the server's own launched games)."""
        # Games that finish while a ladder is rebuilt are folded into one more rebuild; each
        # game has its own ladder (Tetress and ATT ratings never mix).
        self._ladder_due.add(game)
        if self._ladder_lock.locked():
            return
        wait = 1.0
        async with self._ladder_lock:
            while self._ladder_due:
                due = self._ladder_due.pop()
                try:
                    await asyncio.to_thread(update_ladder, self.repo, self.ladder, due)
                except Exception as exc:
                    # The database went away mid-rebuild (a cut link, a restart): the game just
                    # stored would be missing from the table until some later game's rebuild.
                    cause = describe(exc)
                    if cause is None:
                        raise
                    self._ladder_due.add(due)
                    log.warning("ladder_refresh_waiting", game=due, reason=cause)
                    await asyncio.sleep(wait)
                    wait = min(2 * wait, STORE_RETRY_MAX_S)

    def _version(self, player: str | None, name: str, version: str) -> BotVersionInfo | None:
        if player is None:
            return None
        try:
            owner = self.repo.get_player(player)
        except NotFoundError:
            return None
        found = self._registered(owner.id, name, version)
        if found is not None:
            return found
        mine = self._remote_versions(owner.id, name)
        bot_name = mine[-1].bot_name if mine else f"{owner.name}/{name}"
        try:
            return register_remote(
                self.repo, bot_name, owner=player, version=version or "1", hello_name=name
            )
        except ConflictError as exc:
            # Registered by another writer (its session opening) between the look and the
            # insert: the game is that version's, not lost.
            found = self._registered(owner.id, name, version)
            if found is None:
                log.info("casual_bot_not_registered", bot=name, player=player, reason=str(exc))
            return found

    def _remote_versions(self, owner_id: int, name: str) -> list[BotVersionInfo]:
        return [
            v
            for v in self.repo.list_bot_versions()
            if v.owner_id == owner_id and v.source_kind is SourceKind.REMOTE and v.location == name
        ]

    def _registered(self, owner_id: int, name: str, version: str) -> BotVersionInfo | None:
        """The owner's remote version ``version`` (any, newest first, when empty) of ``name``."""
        wanted = version or None
        for v in reversed(self._remote_versions(owner_id, name)):
            if wanted is None or v.version == wanted:
                return v
        return None
