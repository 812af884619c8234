"""Tournaments run by ``referee serve``: one address for casual play and tournaments.

A tournament is *hosted* when its options say ``run_by: server`` (``referee tournament create
--start`` or ``referee tournament start NAME``). A ``referee serve --db`` on the same database
notices it within :data:`POLL_S` and runs it on its own event loop with the server's lobby:

* remote entries are the students' bots connected to the server's address (also those already
  there for casual play); launched entries are started by the server and connect to that same
  address with a one-game token;
* a session that a hosted tournament may need (a remote entry of a tournament being run, or a
  launched bot) is *reserved*: casual pairing leaves it alone (:meth:`TournamentHost.reserved`);
* presence (connected/waiting/missing) is kept on the server's
  :class:`~referee.hosting.presence.PresenceDesk`, which its Arena service reads, and
  a remote bot joining under a name its owner did not enter is told which names are entered;
* a game a remote entry missed (not connected within the wait) is told to its bot as a
  ``SKIPPED`` notice (:mod:`referee.hosting.skipped`): at once to its owner's bots under
  other names, and to the entry's bot whenever it connects;
* resume: a hosted tournament stays ``running`` while the server stops (or dies), and the next
  ``referee serve`` on the database picks it up, replaying only the games cut off. A
  tournament the runner *paused* (games no worker got played) waits for ``tournament start``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time

from referee.hosting.presence import PresenceDesk, watch_presence
from referee.hosting.skipped import MissedGames
from referee.live.hub import LiveHub
from referee.server.handle import ServerHandle
from referee.server.session import BotSession
from referee.storage import Repository, SourceKind, TournamentInfo, TournamentStatus
from referee.storage.failures import describe
from referee.telemetry import metrics
from referee.telemetry.logs import get_logger
from referee.tournament import DEFAULT_REMOTE_WAIT_S
from referee.tournament.runner import GameQueue, TournamentRunner

log = get_logger("referee.hosting.host")

#: The option that marks a tournament as run by the server on its database.
RUN_BY = "run_by"
SERVER = "server"
#: How often the server looks for tournaments to run.
POLL_S = 2.0
#: How long a tournament that failed to start waits before the next try.
RETRY_S = 60.0
#: How long a tournament cut off by a database failure (restarted, unreachable) waits before
#: it is resumed: the games stored stay, only the empty slots are played.
DB_RETRY_S = 5.0
#: The statuses in which a hosted tournament is (re)started: queued, or cut off by a stop.
RUNNABLE = (TournamentStatus.CREATED, TournamentStatus.RUNNING)


def is_hosted(t: TournamentInfo) -> bool:
    return t.settings.options.get(RUN_BY) == SERVER


class _LogLines:
    """Presence lines go to the server's log (there is no instructor console)."""

    def print(self, text: str, *, markup: bool, highlight: bool) -> None:
        log.info("presence", line=text)


class TournamentHost:
    """Runs the hosted tournaments of ``repo`` on ``server`` until cancelled; the presence of
    their remote entries goes on ``presence`` (the desk the server's Arena service reads)."""

    def __init__(
        self,
        repo: Repository,
        server: ServerHandle,
        hub: LiveHub | None = None,
        *,
        remote_timeout: float | None = DEFAULT_REMOTE_WAIT_S,
        ladder: str | None = "main",
        poll_s: float = POLL_S,
        no_sandbox: bool = False,
        presence: PresenceDesk | None = None,
    ) -> None:
        if server.tokens is None:
            raise ValueError("a server that runs tournaments needs LaunchTokens as its auth")
        self.repo = repo
        self.server = server
        self.hub = hub
        self.remote_timeout = remote_timeout
        self.ladder = ladder
        self.poll_s = poll_s
        #: ``--no-sandbox``: launched bots run uncontained (also other owners' bots).
        self.no_sandbox = no_sandbox
        #: Tournament id -> its running task.
        self.running: dict[int, asyncio.Task[None]] = {}
        #: (owner, hello name) of every remote entry of a tournament being run.
        self.entries: dict[int, set[tuple[str, str]]] = {}
        #: Games remote entries missed, told to their bots as they connect (also after their
        #: tournament ended, while this server runs).
        self.missed = MissedGames(server.sessions)
        self.presence = presence
        self._failed: dict[int, float] = {}
        #: Where games of launched bots go (PostgreSQL: ``referee worker`` processes).
        self.queue: GameQueue | None = None

    def reserved(self, session: BotSession) -> bool:
        """Whether casual pairing must leave ``session`` to a tournament: a launched bot, or a
        remote entry of a tournament this server is running."""
        tokens = self.server.tokens
        who = session.identity.player_id
        if who is not None and tokens is not None and tokens.holds(who):
            return True
        key = (who or "", session.identity.name)
        return any(key in entries for entries in self.entries.values())

    async def run(self, queue: GameQueue | None = None) -> None:
        """Look for hosted tournaments every ``poll_s`` seconds, their games of launched bots
        going to ``queue`` when given; cancelling stops them all (each stays ``running``, to
        be resumed by the next server)."""
        self.queue = queue
        delivery = asyncio.create_task(self.missed.serve())
        try:
            while True:
                try:
                    await self.poll()
                except Exception as exc:
                    # The database is away: look again next poll, the server serves on.
                    if describe(exc) is None:
                        raise
                    log.warning("tournaments_poll_failed", reason=describe(exc))
                    metrics.database_reachable("tournaments", False)
                else:
                    metrics.database_reachable("tournaments", True)
                await asyncio.sleep(self.poll_s)
        finally:
            delivery.cancel()
            tasks = [delivery, *self.running.values()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def poll(self) -> list[int]:
        """Start every hosted, runnable tournament not running yet; their ids."""
        started = []
        now = time.monotonic()
        for t in await asyncio.to_thread(self.repo.list_tournaments):
            if not is_hosted(t) or t.status not in RUNNABLE or t.id in self.running:
                continue
            if self._failed.get(t.id, 0.0) > now:
                continue
            task = asyncio.create_task(self._run_one(t), name=f"tournament-{t.name}")
            self.running[t.id] = task
            task.add_done_callback(functools.partial(self._forget, t.id))
            started.append(t.id)
        return started

    def _forget(self, tournament_id: int, _: object = None) -> None:
        self.running.pop(tournament_id, None)
        self.entries.pop(tournament_id, None)

    async def _run_one(self, t: TournamentInfo) -> None:
        try:
            runner = await asyncio.to_thread(self._runner, t)
        except Exception as exc:  # a bad entry, entries not closed yet...: try again later
            log.warning("tournament_not_started", tournament=t.name, reason=str(exc))
            self._failed[t.id] = time.monotonic() + RETRY_S
            return
        self.entries[t.id] = {
            (runner.player.seats.owners.get(v.id, ""), v.location)
            for v in runner.entrants
            if v.source_kind is SourceKind.REMOTE and runner.player.seats is not None
        }
        log.info("tournament_started", tournament=t.name, id=t.id)
        # Its Welcome note goes with the watcher.
        watcher = watch_presence(
            self.repo,
            t,
            runner,
            self.server,
            self.remote_timeout,
            _LogLines(),
            self.missed,
            self.presence,
        )
        try:
            summary = await runner.run()
            log.info("tournament_stopped", tournament=t.name, status=str(summary.status))
        except asyncio.CancelledError:
            # The server is stopping: the tournament stays the server's, resumed next start.
            await asyncio.shield(
                asyncio.to_thread(self.repo.set_tournament_status, t.id, TournamentStatus.RUNNING)
            )
            raise
        except Exception as exc:
            cause = describe(exc)
            if cause is None:
                log.exception("tournament_failed", tournament=t.name)
            else:
                log.warning("tournament_cut_off", tournament=t.name, reason=cause)
            self._failed[t.id] = time.monotonic() + (RETRY_S if cause is None else DB_RETRY_S)
        finally:
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            # Its bots are free for casual pairing again: wake the matchmaker.
            self.entries.pop(t.id, None)
            await self.server.sessions.notify()

    def _runner(self, t: TournamentInfo) -> TournamentRunner:
        runner = TournamentRunner(
            self.repo,
            t.id,
            hub=self.hub,
            server=self.server,
            ladder=self.ladder,
            remote_timeout=self.remote_timeout,
            no_sandbox=self.no_sandbox,
            queue=self.queue,
        )
        # The owners of remote entries (normally done in run(); needed here for reserved()).
        runner.find_owners()
        return runner
