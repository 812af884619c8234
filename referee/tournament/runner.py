"""The tournament runner: plays a stored tournament's games, N at once, and survives crashes.

Everything it needs is in storage (settings, entrants, pairings, finished games), so running
and resuming are the same thing::

    runner = TournamentRunner(repo, "spring-rr")
    summary = await runner.run()

* The schedule comes from :mod:`.schedule` (round robin and gauntlet stored up front, Swiss
  round by round). Each pairing is a game pair with the sides swapped: game index 0 gives
  ``bot_a`` the first seat (Tetress's Red, ATT's chooser), index 1 gives it to ``bot_b``.
* Up to ``concurrency`` games run at once (default: the tournament's setting, else the number
  of cores). A pairing is claimed (``pending -> running``) before its first game, so two
  runners never play the same pairing.
* Each game is played and stored by :func:`referee.play.store.play_and_store` (what is
  stored, and what an aborted, forfeited or voided game means, is written there). A game the
  referee aborted (a bot never connected, ...) is stored for its record and played again; a
  game that keeps aborting is given up by the rule of :mod:`.aborts` (stored void after
  ``max_attempts`` attempts, the tournament goes on), on the workers alike.
* Resume: :meth:`Repository.resume_tournament` turns pairings left ``running`` by a crash back
  to ``pending``; their finished games stay and only the missing game indices are played.
  A game cut off by the crash was never stored, so it is replayed from its start.
* Bots: one game is played by :class:`referee.play.game.GamePlayer`: launched ones (package,
  SDK module, command) get fresh processes for every game; remote ones are taken from the
  lobby of ``server`` (:mod:`referee.play.seats`). A game with a remote seat is played on
  ``server`` (what the runner is given of it: :class:`referee.server.handle.ServerHandle`);
  a launched bot in such a game connects to it with a one-game token.
* Workers: with a ``queue`` (PostgreSQL, :mod:`referee.workers`) every game of launched bots
  is a job that a ``referee worker`` process plays and records; this runner only waits for
  the stored result. Games with a remote seat are still played here.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from engine.game import Game
from referee.live.hub import LiveHub
from referee.match.runner import new_game_id
from referee.play.bots import launch_spec
from referee.play.game import GamePlayer
from referee.play.store import HubBroadcast, has_result, play_and_store
from referee.sandbox import warm
from referee.sandbox.isolation import Isolation, choose
from referee.server.handle import ServerHandle
from referee.storage import (
    BotVersionInfo,
    DuplicateGameError,
    GameSummary,
    PairingInfo,
    PairingStatus,
    Repository,
    SourceKind,
    TournamentInfo,
    TournamentStatus,
)
from referee.telemetry.logs import get_logger
from referee.tournament import DEFAULT_REMOTE_WAIT_S, schedule
from referee.tournament.aborts import MAX_ATTEMPTS, gives_up, record_given_up
from referee.tournament.entries import settle_entries
from referee.tournament.gamespec import (
    check_isolation,
    game_terms,
    slot_filing,
    slot_labels,
    slot_seats,
    tournament_book,
    tournament_game,
)
from referee.tournament.ladder import DEFAULT_LADDER, update_ladder
from referee.tournament.standings import save_tournament_ratings

log = get_logger("referee.tournament")


class Progress(Protocol):
    """What a display hears from the runner (called on the event loop; must not block)."""

    def started(self, total: int, done: int) -> None: ...

    def game_done(self, summary: GameSummary, label: str) -> None: ...


class GameQueue(Protocol):
    """Where games of launched bots are played instead of here (:mod:`referee.workers`)."""

    async def play(
        self, tournament_id: int, pairing_id: int, game_index: int
    ) -> GameSummary | None:
        """Have the game played and recorded elsewhere; its stored game (given up by the
        rule of :mod:`.aborts`, a void one), or ``None`` when no worker got it played."""
        ...


@dataclass(slots=True)
class RunSummary:
    tournament_id: int
    status: TournamentStatus
    #: Games recorded by this run (aborted ones included).
    recorded: int = 0
    #: Games this run played but found already stored (another runner was faster).
    duplicates: int = 0
    #: Games given up after ``max_attempts`` failed attempts, here or on the workers (stored
    #: void with the reason, :mod:`.aborts`; the tournament goes on).
    given_up: int = 0
    #: Games no worker got played (their jobs kept ending without a game): the tournament
    #: pauses, to be resumed.
    unplayed: int = 0
    #: Pairings a crash had left running, put back to pending at the start.
    reset: tuple[int, ...] = ()
    wall_s: float = 0.0

    @property
    def complete(self) -> bool:
        return self.status is TournamentStatus.FINISHED


class TournamentRunner:
    """Runs (or resumes) one stored tournament to its end; see the module docstring."""

    def __init__(
        self,
        repo: Repository,
        tournament: int | str,
        *,
        concurrency: int | None = None,
        hub: LiveHub | None = None,
        server: ServerHandle | None = None,
        progress: Progress | None = None,
        ladder: str | None = DEFAULT_LADDER,
        max_attempts: int = MAX_ATTEMPTS,
        connect_timeout: float = 30.0,
        remote_timeout: float | None = DEFAULT_REMOTE_WAIT_S,
        on_game: Callable[[GameSummary], None] | None = None,
        isolation: Isolation | None = None,
        no_sandbox: bool = False,
        queue: GameQueue | None = None,
    ) -> None:
        self.repo = repo
        #: ``no_sandbox`` (``--no-sandbox``) also allows launching other owners' bots
        #: uncontained where the sandbox cannot run.
        self.no_sandbox = no_sandbox
        self.info: TournamentInfo = repo.get_tournament(tournament)
        s = self.info.settings
        self.concurrency = max(1, concurrency or s.concurrency or os.cpu_count() or 1)
        self.hub = hub
        self.progress = progress
        self.ladder = ladder if s.options.get("ladder", True) is not False else None
        self.max_attempts = max(1, max_attempts)
        self.on_game = on_game
        self.game: Game[Any] = tournament_game(self.info)
        terms = game_terms(
            self.info,
            self.game,
            isolation=isolation if isolation is not None else choose(no_sandbox),
            connect_timeout=connect_timeout,
            remote_timeout=remote_timeout,
        )
        self.player = GamePlayer(terms, server)
        # Submitted bots: the version each plays is fixed before the first pairing.
        self.settled = settle_entries(repo, self.info.id)
        self.entrants = repo.tournament_entrants(self.info.id)
        self.versions = {v.id: v for v in self.entrants}
        self._ladder_dirty: asyncio.Event | None = None  # made on the loop, in run()
        self._summary = RunSummary(self.info.id, self.info.status)
        #: The tournament's openings book (stored with it when created with --openings).
        self.book = tournament_book(self.info)
        #: Games of launched bots only go to this queue's workers (``None``: played here).
        self.queue = queue
        #: Warm sandboxes the caller asked for ahead of this run, on the same terms (started
        #: while it opened the database): the games use this demand instead of a new one.
        self.warm_ahead: warm.Demand | None = None

    # ---------------------------------------------------------------- the tournament

    async def run(self) -> RunSummary:
        """Play every game still missing; returns when the tournament is complete, or when
        the workers could not get games played (status ``paused``). Cancelling stops the
        running games (they will be replayed) and leaves the tournament ``paused``."""
        start = time.monotonic()
        repo = self.repo
        t = self.info
        self.find_owners()
        check_isolation(self.player.terms.isolation, self.entrants, allow_none=self.no_sandbox)
        state = await asyncio.to_thread(repo.resume_tournament, t.id)
        self._summary.reset = state.reset
        if state.reset:
            log.info("resumed", tournament=t.name, reset_pairings=len(state.reset))
        await asyncio.to_thread(repo.set_tournament_status, t.id, TournamentStatus.RUNNING)
        if self.progress is not None:
            total = schedule.total_games_planned(t, len(self.entrants))
            self.progress.started(max(total, state.games_finished), state.games_finished)
        self._ladder_dirty = asyncio.Event()
        ladder_task = asyncio.create_task(self._ladder_loop()) if self.ladder else None
        # Cut off by an error (the database lost, say) it stays running, to be resumed; only
        # games no worker got played pause it (a game that keeps aborting is stored void).
        status = TournamentStatus.RUNNING
        try:
            while True:
                todo = await asyncio.to_thread(schedule.next_pairings, repo, t, self.entrants)
                if todo is None:
                    status = TournamentStatus.FINISHED
                    break
                unplayed = await self._play_pairings(todo)
                if unplayed:
                    status = TournamentStatus.PAUSED
                    break
        finally:
            if ladder_task is not None:
                ladder_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await ladder_task
            await asyncio.shield(self._wrap_up(status))
        self._summary.status = status
        self._summary.wall_s = time.monotonic() - start
        return self._summary

    def find_owners(self) -> None:
        """Tell the seat finder who owns each remote entrant (whose token may play it)."""
        remote = [v for v in self.entrants if v.source_kind is SourceKind.REMOTE]
        if not remote:
            return
        if self.player.seats is None:
            raise ValueError(
                "this tournament has remote bots: run it with a server they connect to"
            )
        for v in remote:
            if v.owner_id is not None:
                self.player.seats.owners[v.id] = self.repo.get_player(v.owner_id).name

    async def _wrap_up(self, status: TournamentStatus) -> None:
        repo = self.repo
        for p in await asyncio.to_thread(repo.pairings, self.info.id, status=PairingStatus.RUNNING):
            await asyncio.to_thread(repo.release_pairing, p.id)
        if status is TournamentStatus.FINISHED and (
            self._summary.recorded
            or await asyncio.to_thread(repo.latest_ratings, "ml_elo", tournament_id=self.info.id)
            is None
        ):
            # Only when something changed: running a finished tournament again stores nothing.
            # Before the status: a tournament read as finished has its final tables.
            await asyncio.to_thread(save_tournament_ratings, repo, self.info.id)
        await asyncio.to_thread(repo.set_tournament_status, self.info.id, status)
        if self.ladder:
            await asyncio.to_thread(update_ladder, repo, self.ladder, self.info.settings.game)

    async def _ladder_loop(self) -> None:
        assert self._ladder_dirty is not None and self.ladder is not None
        while True:
            await self._ladder_dirty.wait()
            self._ladder_dirty.clear()
            try:
                await asyncio.to_thread(
                    update_ladder, self.repo, self.ladder, self.info.settings.game
                )
            except Exception:
                log.exception("ladder_update_failed")
            await asyncio.sleep(1.0)

    async def _play_pairings(self, pairings: Sequence[PairingInfo]) -> int:
        """Play the remaining games of ``pairings``; returns how many the workers did not get
        played."""
        queue = [(p, i) for p in pairings for i in p.remaining_games]
        claims: dict[int, asyncio.Future[bool]] = {}
        unplayed = 0

        async def claim(pairing: PairingInfo) -> bool:
            if pairing.id not in claims:
                if pairing.status is PairingStatus.RUNNING:
                    fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
                    fut.set_result(True)
                    claims[pairing.id] = fut
                else:
                    claims[pairing.id] = asyncio.ensure_future(
                        asyncio.to_thread(self.repo.claim_pairing, pairing.id)
                    )
            return await claims[pairing.id]

        async def slot(pairing: PairingInfo, index: int, freed: asyncio.Event) -> None:
            await self._play_slot(pairing, index, freed.set)

        async def worker(need: warm.Demand | None) -> None:
            while queue:
                pairing, index = queue.pop(0)
                if need is not None:  # no more warm bots than the games left to start
                    need.resize(need.slots, 2 * (len(queue) + 1))
                if not await claim(pairing):
                    continue
                # The slot is free once the game has its result: its next game launches
                # while this one's bots are stopped and it is stored.
                freed = asyncio.Event()
                await _first_of(tasks.create_task(slot(pairing, index, freed)), freed)

        async def queued(pairing: PairingInfo, index: int) -> None:
            nonlocal unplayed
            if await claim(pairing) and not await self._play_queued(pairing, index):
                unplayed += 1

        # Games of launched bots go to the workers all at once (the queue is their limit);
        # games with a remote seat are played here, ``concurrency`` at a time.
        sent = [(p, i) for p, i in queue if self._goes_to_queue(p, i)]
        queue = [item for item in queue if item not in sent]
        workers = min(self.concurrency, len(queue))
        # Bots for the next games start ahead of need, two per game that may start next.
        async with self._warm(2 * workers) as need, asyncio.TaskGroup() as tasks:
            if need is not None:
                need.resize(2 * workers)
            for pairing, index in sent:
                tasks.create_task(queued(pairing, index))
            for _ in range(workers):
                tasks.create_task(worker(need))
        self._summary.unplayed += unplayed
        return unplayed

    def _warm(self, slots: int) -> contextlib.AbstractAsyncContextManager[warm.Demand | None]:
        """Warm sandboxes for ``slots`` bots at once: the demand asked for ahead of this run
        (:attr:`warm_ahead`) when its terms are the games', else a new one."""
        terms = self.player.terms
        launches = warm.WarmTerms(memory_mb=terms.memory_mb)
        if self.warm_ahead is not None and self.warm_ahead.terms == launches:
            return contextlib.nullcontext(self.warm_ahead)
        bots = [v for v in self.versions.values() if v.source_kind is not SourceKind.REMOTE]
        numpy = warm.may_import_numpy(launch_spec(v) for v in bots)
        return warm.demand(slots, launches, terms.isolation, numpy=numpy)

    # ---------------------------------------------------------------- one game

    def _seats(self, pairing: PairingInfo, index: int) -> tuple[BotVersionInfo, BotVersionInfo]:
        return slot_seats(self.versions, pairing, index)

    def _goes_to_queue(self, pairing: PairingInfo, index: int) -> bool:
        """Whether a worker plays this game: a queue is set and no seat is remote (a remote
        bot's session is held by this server, so its games are played here)."""
        if self.queue is None:
            return False
        return all(v.source_kind is not SourceKind.REMOTE for v in self._seats(pairing, index))

    async def _play_queued(self, pairing: PairingInfo, index: int) -> bool:
        """Game ``index`` of ``pairing`` played and stored by a worker (given up, if it kept
        aborting); ``False`` if no worker got it played."""
        assert self.queue is not None
        summary = await self.queue.play(self.info.id, pairing.id, index)
        if summary is None:
            log.warning("game_unplayed", pairing=pairing.id, game_index=index)
            return False
        self._summary.recorded += 1
        if not has_result(summary):
            self._gave_up(pairing, index, summary)
        self._after_game(summary, self._seats(pairing, index))
        return True

    async def _play_slot(
        self, pairing: PairingInfo, index: int, on_result: Callable[[], None] | None = None
    ) -> None:
        """Play game ``index`` of ``pairing`` until it is stored with a result, or given up
        (stored void, :mod:`.aborts`) when it keeps aborting. ``on_result``: called when an
        attempt ends with a result, before it is stored."""
        seats = self._seats(pairing, index)
        attempt = 0
        while True:
            attempt += 1
            uid = new_game_id()
            labels, opening = slot_labels(self.info, self.book, pairing, index)
            filing = slot_filing(self.info, pairing, index)
            try:
                stored = await play_and_store(
                    self.player,
                    self.repo,
                    seats,
                    filing,
                    uid=uid,
                    labels=labels,
                    opening=opening,
                    broadcast=HubBroadcast(self.hub) if self.hub is not None else None,
                    on_result=on_result,
                )
            except DuplicateGameError:
                self._summary.duplicates += 1
                log.warning("duplicate_game", pairing=pairing.id, game_index=index)
                return
            summary = stored.summary
            self._summary.recorded += 1
            if stored.has_result:
                self._after_game(summary, seats)
                return
            log.warning(
                "game_aborted",
                pairing=pairing.id,
                game_index=index,
                attempt=attempt,
                reason=summary.reason,
            )
            if gives_up(attempt, self.max_attempts):
                await self._give_up(pairing, index, attempt, summary.reason)
                return

    async def _give_up(self, pairing: PairingInfo, index: int, attempts: int, why: str) -> None:
        """Store game ``index`` of ``pairing`` void after ``attempts`` aborted attempts, the
        last for ``why`` (:mod:`.aborts`); the tournament goes on."""
        seats = self._seats(pairing, index)
        reason = f"attempt {attempts}: {why}"
        void = await asyncio.to_thread(
            record_given_up,
            self.repo,
            self.info,
            self.game,
            pairing,
            index,
            seats,
            reason,
            attempts,
        )
        if void is None:  # the slot was filled meanwhile (another runner)
            self._summary.duplicates += 1
            return
        self._summary.recorded += 1
        self._gave_up(pairing, index, void)
        self._after_game(void, seats)

    def _gave_up(self, pairing: PairingInfo, index: int, summary: GameSummary) -> None:
        self._summary.given_up += 1
        log.warning("game_given_up", pairing=pairing.id, game_index=index, reason=summary.reason)

    def _after_game(self, summary: GameSummary, seats: Sequence[BotVersionInfo]) -> None:
        if self._ladder_dirty is not None:
            self._ladder_dirty.set()
        if self.progress is not None:
            line = f"{seats[0].bot_name} {summary.result} {seats[1].bot_name} ({summary.verdict})"
            self.progress.game_done(summary, line)
        if self.on_game is not None:
            self.on_game(summary)


async def _first_of(game: asyncio.Task[None], freed: asyncio.Event) -> None:
    """Wait until ``game`` is over or ``freed`` is set, whichever comes first."""
    signal = asyncio.ensure_future(freed.wait())
    try:
        await asyncio.wait((game, signal), return_when=asyncio.FIRST_COMPLETED)
    finally:
        signal.cancel()
