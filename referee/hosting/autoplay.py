"""The ladder plays submitted bots while their authors sleep.

``referee serve --submissions`` launches, in the sandbox, the latest accepted version of each
submitted bot against another's, at most ``--ladder-games-per-hour`` games an hour and
``--ladder-concurrency`` at once. Each game is stored as a rated game naming the exact version
in each seat, and the live ladder is refreshed as for the games of connected bots
(:class:`~referee.hosting.casual.CasualRecorder`). A rejected or still-validating version never
plays; a new accepted upload plays from its next game on.

On a PostgreSQL database the ladder is given a job queue (:mod:`referee.workers.dispatch`):
it still picks the pair, then enqueues one job per game carrying the two exact versions, the
game, its clocks and a uid made here (:mod:`referee.workers.ladderjob`), and a ``referee
worker`` plays and stores it; ``--ladder-concurrency`` then bounds the jobs in flight.

Pairs are chosen by :mod:`referee.hosting.ladder_schedule`: a newly accepted version plays
first (its first rated games within a bound), then the teams with the fewest games, so a
team's many versions or bots never take a larger share than another team's one; a version its
team superseded is not scheduled again.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.game import Game
from referee.hosting import ladder_schedule
from referee.hosting.casual import CasualRecorder
from referee.hosting.drain import drain_tasks
from referee.hosting.ladder_schedule import Entrant
from referee.live.hub import LiveHub
from referee.match.clock import TimeControl
from referee.match.report import new_game_id
from referee.play.game import GamePlayer, GameTerms
from referee.play.store import Filing, HubBroadcast, play_and_store
from referee.sandbox import priority, warm
from referee.sandbox.isolation import Isolation, choose, require_trusted
from referee.storage import BotVersionInfo, Repository
from referee.storage import submissions as rows
from referee.storage.enums import SubmissionStatus
from referee.submissions.limits import DEFAULT_LADDER_GAMES_PER_HOUR
from referee.telemetry.logs import get_logger

if TYPE_CHECKING:
    from referee.workers.dispatch import QueueDispatcher

log = get_logger("referee.hosting.autoplay")

#: How often to look again when fewer than two bots have an accepted version.
IDLE_RECHECK_S = 30.0
#: Seconds before a game's start its bots' warm sandboxes are started (their imports take
#: well under a second on an idle machine, a few seconds on a busy one).
WARM_LEAD_S = 5.0


@dataclass(frozen=True, slots=True)
class AutoplaySettings:
    """What the ladder's launched games are played with (``referee serve`` settings)."""

    game: Game[Any]
    time_control: TimeControl
    memory_mb: float | None
    games_per_hour: float = DEFAULT_LADDER_GAMES_PER_HOUR
    concurrency: int = 1
    no_sandbox: bool = False
    connect_timeout_s: float = 30.0

    @property
    def interval_s(self) -> float:
        """Seconds between two game starts."""
        return 3600.0 / self.games_per_hour


class SubmittedLadder:
    """Plays ladder games between submitted bots' playing versions until cancelled."""

    def __init__(
        self,
        repo: Repository,
        settings: AutoplaySettings,
        recorder: CasualRecorder,
        hub: LiveHub | None = None,
        queue: QueueDispatcher | None = None,
    ) -> None:
        if settings.games_per_hour <= 0 or settings.concurrency < 1:
            raise ValueError("the ladder needs games_per_hour > 0 and concurrency >= 1")
        self.repo = repo
        self.settings = settings
        self.recorder = recorder
        self.hub = hub
        #: On PostgreSQL: games are enqueued for workers instead of played here.
        self.queue = queue
        self._open = contextlib.AsyncExitStack()
        self._queue_open = False
        isolation = choose(settings.no_sandbox)
        # Uploads are untrusted: without the sandbox they play only if the operator said so.
        require_trusted(isolation, False, "an uploaded bot", settings.no_sandbox)
        memory = int(settings.memory_mb) if settings.memory_mb else None
        self.player = GamePlayer(
            GameTerms(
                settings.game,
                settings.time_control,
                memory,
                settings.connect_timeout_s,
                None,
                isolation,
            )
        )
        self.running: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(settings.concurrency)
        #: Games started in this run, per team, version and pair (the schedule's input).
        self.tally = ladder_schedule.Tally.empty()
        #: Games stored by this ladder (for logs and tests).
        self.stored = 0

    async def run(self) -> None:
        """Start a game every :attr:`AutoplaySettings.interval_s` while a slot is free."""
        if self.queue is not None and not self._queue_open:
            # Closed by drain(), once the games waited for have ended.
            await self._open.enter_async_context(self.queue)
            self._queue_open = True
        # Games played here take their bots from warm sandboxes (workers keep their own).
        terms = self.player.terms
        launches = warm.WarmTerms(memory_mb=terms.memory_mb)
        isolation = terms.isolation if self.queue is None else Isolation.NONE
        async with warm.demand(0, launches, isolation) as need:
            while True:
                await self._slots.acquire()
                try:
                    pair = await asyncio.to_thread(self.next_pair)
                except Exception:
                    log.exception("ladder_pairing_failed")
                    pair = None
                if pair is None:  # nothing to play: no sandbox kept either
                    self._slots.release()
                    if need is not None:
                        need.resize(0)
                    await asyncio.sleep(min(self.settings.interval_s, IDLE_RECHECK_S))
                    continue
                task = asyncio.create_task(self._play(pair))
                self.running.add(task)
                task.add_done_callback(self._done)
                await self._until_next_game(need)

    async def _until_next_game(self, need: warm.Demand | None) -> None:
        """Wait for the next game's start; its two bots' sandboxes are started
        :data:`WARM_LEAD_S` ahead of it, and none is kept between games further apart."""
        interval = self.settings.interval_s
        if need is not None:
            need.resize(0)
            await asyncio.sleep(max(0.0, interval - WARM_LEAD_S))
            need.resize(2)
        await asyncio.sleep(min(interval, WARM_LEAD_S) if need is not None else interval)

    def _done(self, task: asyncio.Task[None]) -> None:
        self.running.discard(task)
        self._slots.release()

    def entrants(self) -> list[BotVersionInfo]:
        """Each submitted bot's playing version (its latest accepted one)."""
        return [self.repo.get_bot_version(e.version_id) for e in self._entrants()]

    def _entrants(self) -> list[Entrant]:
        playing: dict[str, Entrant] = {}
        for s in rows.list_submissions(self.repo.db):  # oldest first: the last accepted wins
            if s.status is SubmissionStatus.ACCEPTED:
                accepted = s.validated_at.timestamp() if s.validated_at else float(s.id)
                playing[s.bot_name] = Entrant(s.bot_version_id, s.owner, accepted)
        return sorted(playing.values(), key=lambda e: e.version_id)

    def next_pair(self) -> tuple[BotVersionInfo, BotVersionInfo] | None:
        """The next game's two playing versions (:mod:`referee.hosting.ladder_schedule`: new
        versions first, then per team); ``None`` when fewer than two teams have one."""
        pair = ladder_schedule.next_pair(self._entrants(), self.tally)
        if pair is None:
            return None
        self.tally.count(*pair)
        return self.repo.get_bot_version(pair[0].version_id), self.repo.get_bot_version(
            pair[1].version_id
        )

    async def _play(self, seats: tuple[BotVersionInfo, BotVersionInfo]) -> None:
        uid = new_game_id()
        if self.queue is not None:
            await self._enqueue(uid, seats)
            return
        game = self.settings.game
        try:
            # Its bots run below the first checks' (priority.py): the ladder can wait.
            with priority.background():
                await play_and_store(
                    self.player,
                    self.repo,
                    seats,
                    Filing("ladder"),
                    uid=uid,
                    labels={"mode": "ladder"},
                    broadcast=HubBroadcast(self.hub, mode="ladder") if self.hub else None,
                )
            self.stored += 1
            log.info("ladder_game_stored", game_id=uid, seats=[v.label for v in seats])
            await self.recorder.refresh_ladder(game.name)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("ladder_game_failed", game_id=uid, seats=[v.label for v in seats])

    async def _enqueue(self, uid: str, seats: tuple[BotVersionInfo, BotVersionInfo]) -> None:
        """Have a worker play the game; wait for its job so the slot stays taken meanwhile."""
        from referee.workers.ladderjob import ladder_job_kwargs

        assert self.queue is not None
        terms = self.player.terms
        kwargs = ladder_job_kwargs(
            uid, terms.game, seats, terms.time_control, terms.memory_mb, terms.connect_timeout
        )
        try:
            job_id = await self.queue.enqueue_ladder(kwargs)
            status = await self.queue.wait(job_id)
            stored = await asyncio.to_thread(self.repo.has_game, uid)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("ladder_job_failed", game_id=uid, seats=[v.label for v in seats])
            return
        log.info("ladder_job_done", game_id=uid, job_id=job_id, status=status, stored=stored)
        if stored:
            self.stored += 1
            await self.recorder.refresh_ladder(terms.game.name)

    async def drain(self, grace: float) -> None:
        """Let running games finish for ``grace`` seconds, then stop the rest (not stored;
        a queued game goes on on its worker and is stored there)."""
        try:
            await self._drain(grace)
        finally:
            await self._open.aclose()
            self._queue_open = False

    async def _drain(self, grace: float) -> None:
        await drain_tasks(self.running, grace)
