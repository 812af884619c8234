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
* Each finished game is written with its record in one transaction
  (:meth:`Repository.record_game`); the forfeit policy is applied there. A game the referee
  aborted (a bot never connected, ...) is stored for its record and played again, up to
  ``max_attempts`` times in one run.
* Resume: :meth:`Repository.resume_tournament` turns pairings left ``running`` by a crash back
  to ``pending``; their finished games stay and only the missing game indices are played.
  A game cut off by the crash was never stored, so it is replayed from its start.
* Bots: launched ones (package, SDK module, command) get fresh processes for every game
  (:func:`referee.local.play_match`); remote ones are taken from the lobby of ``server``
  (registered bots whose owner's token opened the session). A game with a remote seat is
  played on ``server``; a launched bot in such a game connects to it with a one-game token.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from engine.game import Game
from engine.registry import load_game
from referee import verdicts
from referee.clock import TimeControl
from referee.launch import LaunchedBot, launch
from referee.local import note_launched, play_match, watch_launched
from referee.logging import get_logger
from referee.match import GameReport, MatchRunner, Observer, new_game_id
from referee.session import BotSession, Identity
from referee.storage import (
    BotVersionInfo,
    DuplicateGameError,
    FinishedGame,
    GameSummary,
    PairingInfo,
    PairingStatus,
    Repository,
    SourceKind,
    TournamentInfo,
    TournamentStatus,
    Verdict,
)
from referee.tournament import schedule
from referee.tournament.bots import launch_spec
from referee.tournament.gamerows import finished_game
from referee.tournament.ladder import DEFAULT_LADDER, update_ladder
from referee.tournament.live import LiveEnd, LiveHub, LiveObserver
from referee.tournament.standings import save_tournament_ratings
from referee.verdicts import GameEnd

log = get_logger("referee.tournament")

#: How much of a bot's output is stored with each seat.
STDERR_KEEP = 8 * 1024


class Progress(Protocol):
    """What a display hears from the runner (called on the event loop; must not block)."""

    def started(self, total: int, done: int) -> None: ...

    def game_done(self, summary: GameSummary, label: str) -> None: ...


@dataclass(slots=True)
class RunSummary:
    tournament_id: int
    status: TournamentStatus
    #: Games recorded by this run (aborted ones included).
    recorded: int = 0
    #: Games this run played but found already stored (another runner was faster).
    duplicates: int = 0
    #: Games given up on after ``max_attempts`` aborted attempts (left for a later resume).
    given_up: int = 0
    #: Pairings a crash had left running, put back to pending at the start.
    reset: tuple[int, ...] = ()
    wall_s: float = 0.0

    @property
    def complete(self) -> bool:
        return self.status is TournamentStatus.FINISHED


class LaunchTokens:
    """The server's authenticator in tournament mode: one-game tokens for launched bots
    first, then the stored player tokens (``fallback``)."""

    def __init__(self, fallback: Any | None = None) -> None:
        self.tokens: dict[str, str] = {}
        self.fallback = fallback

    async def authenticate(self, hello: Any) -> Identity:
        from referee.auth import AuthError

        player = self.tokens.get(hello.token)
        if player is not None:
            name = " ".join(hello.bot_name.split())[:64] or "anonymous"
            return Identity(name=name, player_id=player)
        if self.fallback is None:
            raise AuthError("unknown token")
        result: Identity = await self.fallback.authenticate(hello)
        return result


@dataclass(eq=False)
class _Played:
    report: GameReport
    outputs: list[str] = field(default_factory=list)


def _player_is(player: str) -> Callable[[BotSession], bool]:
    def matches(session: BotSession) -> bool:
        return session.identity.player_id == player

    return matches


class TournamentRunner:
    """Runs (or resumes) one stored tournament to its end; see the module docstring."""

    def __init__(
        self,
        repo: Repository,
        tournament: int | str,
        *,
        concurrency: int | None = None,
        hub: LiveHub | None = None,
        server: Any | None = None,
        progress: Progress | None = None,
        ladder: str | None = DEFAULT_LADDER,
        max_attempts: int = 3,
        connect_timeout: float = 30.0,
        remote_timeout: float | None = None,
        on_game: Callable[[GameSummary], None] | None = None,
    ) -> None:
        self.repo = repo
        self.info: TournamentInfo = repo.get_tournament(tournament)
        s = self.info.settings
        self.concurrency = max(1, concurrency or s.concurrency or os.cpu_count() or 1)
        self.hub = hub
        self.server = server
        self.progress = progress
        self.ladder = ladder if s.options.get("ladder", True) is not False else None
        self.max_attempts = max(1, max_attempts)
        self.connect_timeout = float(s.options.get("connect_timeout", connect_timeout))
        self.remote_timeout = remote_timeout
        self.on_game = on_game
        self.game: Game[Any] = load_game(s.game, **{k: int(v) for k, v in s.game_params.items()})
        tc = s.time_control
        self.time_control = TimeControl(
            game_time_s=float(tc.get("per_game", 180.0)),
            move_time_s=float(tc.get("per_move", 0.0)),
            increment_s=float(tc.get("increment", 0.0)),
            grace_s=float(tc.get("grace", 0.25)),
        )
        self.memory_mb = s.memory_limit_mb
        self.entrants = repo.tournament_entrants(self.info.id)
        self.versions = {v.id: v for v in self.entrants}
        self._owners: dict[int, str] = {}
        self._reserved: set[str] = set()
        self._ladder_dirty: asyncio.Event | None = None  # made on the loop, in run()
        self._summary = RunSummary(self.info.id, self.info.status)

    # ---------------------------------------------------------------- the tournament

    async def run(self) -> RunSummary:
        """Play every game still missing; returns when the tournament is complete, or when
        games had to be given up (status ``paused``). Cancelling stops the running games
        (they will be replayed) and leaves the tournament ``paused``."""
        start = time.monotonic()
        repo = self.repo
        t = self.info
        if any(v.source_kind is SourceKind.REMOTE for v in self.entrants):
            if self.server is None:
                raise ValueError(
                    "this tournament has remote bots: run it with a server they connect to"
                )
            for v in self.entrants:
                if v.source_kind is SourceKind.REMOTE and v.owner_id is not None:
                    self._owners[v.id] = repo.get_player(v.owner_id).name
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
        status = TournamentStatus.PAUSED
        try:
            while True:
                todo = await asyncio.to_thread(schedule.next_pairings, repo, t, self.entrants)
                if todo is None:
                    status = TournamentStatus.FINISHED
                    break
                gave_up = await self._play_pairings(todo)
                if gave_up:
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

    async def _wrap_up(self, status: TournamentStatus) -> None:
        repo = self.repo
        for p in await asyncio.to_thread(repo.pairings, self.info.id, status=PairingStatus.RUNNING):
            await asyncio.to_thread(repo.release_pairing, p.id)
        await asyncio.to_thread(repo.set_tournament_status, self.info.id, status)
        if status is TournamentStatus.FINISHED and (
            self._summary.recorded
            or await asyncio.to_thread(repo.latest_ratings, "ml_elo", tournament_id=self.info.id)
            is None
        ):
            # Only when something changed: running a finished tournament again stores nothing.
            await asyncio.to_thread(save_tournament_ratings, repo, self.info.id)
        if self.ladder:
            await asyncio.to_thread(update_ladder, repo, self.ladder)

    async def _ladder_loop(self) -> None:
        assert self._ladder_dirty is not None and self.ladder is not None
        while True:
            await self._ladder_dirty.wait()
            self._ladder_dirty.clear()
            try:
                await asyncio.to_thread(update_ladder, self.repo, self.ladder)
            except Exception:
                log.exception("ladder_update_failed")
            await asyncio.sleep(1.0)

    async def _play_pairings(self, pairings: Sequence[PairingInfo]) -> int:
        """Play the remaining games of ``pairings``; returns how many were given up."""
        queue = [(p, i) for p in pairings for i in p.remaining_games]
        claims: dict[int, asyncio.Future[bool]] = {}
        gave_up = 0

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

        async def worker() -> None:
            nonlocal gave_up
            while queue:
                pairing, index = queue.pop(0)
                if not await claim(pairing):
                    continue
                if not await self._play_slot(pairing, index):
                    gave_up += 1

        workers = min(self.concurrency, len(queue))
        async with asyncio.TaskGroup() as tasks:
            for _ in range(workers):
                tasks.create_task(worker())
        self._summary.given_up += gave_up
        return gave_up

    # ---------------------------------------------------------------- one game

    def _seats(self, pairing: PairingInfo, index: int) -> tuple[BotVersionInfo, BotVersionInfo]:
        assert pairing.bot_b_id is not None
        a, b = self.versions[pairing.bot_a_id], self.versions[pairing.bot_b_id]
        return (a, b) if index % 2 == 0 else (b, a)

    async def _play_slot(self, pairing: PairingInfo, index: int) -> bool:
        """Play game ``index`` of ``pairing`` until it is stored with a result; ``False`` if
        every attempt was aborted."""
        seats = self._seats(pairing, index)
        for attempt in range(1, self.max_attempts + 1):
            uid = new_game_id()
            # Tag names in the record (capitalised); Round and Game are standard tags already.
            labels = {
                "tournament": self.info.name,
                "tournamentRound": str(pairing.round),
                "board": str(pairing.board + 1),
                "leg": str(index + 1),
            }
            started = datetime.now(UTC)
            if self.hub is not None:
                self.hub.start(
                    uid,
                    self.game.name,
                    [s.label for s in seats],
                    self.game.seat_names,
                    self.game.new_state().to_string(),
                    self.info.id,
                )
            observer = LiveObserver(self.hub, uid) if self.hub is not None else None
            try:
                played = await self._play(seats, uid, labels, observer)
            finally:
                if self.hub is not None:
                    # A game that never started (a bot did not connect) has no on_end.
                    self.hub.finish(uid, LiveEnd("*", "aborted", "aborted", "not played", None))
            finished = datetime.now(UTC)
            game = self._finished_game(played, seats, pairing, index, uid, started, finished)
            try:
                summary = await asyncio.to_thread(self.repo.record_game, game)
            except DuplicateGameError:
                self._summary.duplicates += 1
                log.warning("duplicate_game", pairing=pairing.id, game_index=index)
                return True
            self._summary.recorded += 1
            if summary.verdict is not Verdict.ABORTED:
                self._after_game(summary, seats)
                return True
            log.warning(
                "game_aborted",
                pairing=pairing.id,
                game_index=index,
                attempt=attempt,
                reason=summary.reason,
            )
        return False

    def _after_game(self, summary: GameSummary, seats: Sequence[BotVersionInfo]) -> None:
        if self._ladder_dirty is not None:
            self._ladder_dirty.set()
        if self.progress is not None:
            line = f"{seats[0].bot_name} {summary.result} {seats[1].bot_name} ({summary.verdict})"
            self.progress.game_done(summary, line)
        if self.on_game is not None:
            self.on_game(summary)

    async def _play(
        self,
        seats: Sequence[BotVersionInfo],
        uid: str,
        labels: dict[str, str],
        observer: Observer | None,
    ) -> _Played:
        if all(v.source_kind is not SourceKind.REMOTE for v in seats):
            result = await play_match(
                [launch_spec(v) for v in seats],
                self.game,
                time_control=self.time_control,
                memory_mb=self.memory_mb,
                observer=observer,
                connect_timeout=self.connect_timeout,
                labels=labels,
                game_id=uid,
            )
            return _Played(result.report, [result.output(i) for i in range(2)])
        return await self._play_on_server(seats, uid, labels, observer)

    async def _play_on_server(
        self,
        seats: Sequence[BotVersionInfo],
        uid: str,
        labels: dict[str, str],
        observer: Observer | None,
    ) -> _Played:
        server = self.server
        assert server is not None
        auth = server.auth
        launched: list[LaunchedBot | None] = [None, None]
        wanted: list[Callable[[BotSession], bool]] = []
        tokens: list[str] = []
        try:
            for seat, v in enumerate(seats):
                if v.source_kind is SourceKind.REMOTE:
                    wanted.append(self._remote_predicate(v))
                    continue
                if not isinstance(auth, LaunchTokens):
                    raise ValueError("launched bots on a server need LaunchTokens as its auth")
                token = secrets.token_hex(16)
                player = f"launch:{uid}:{seat}"
                auth.tokens[token] = player
                tokens.append(token)
                address = server.addresses[0]
                launched[seat] = await launch(
                    launch_spec(v), address, token, memory_mb=self.memory_mb
                )
                wanted.append(_player_is(player))
            # A launched bot has connect_timeout to connect (and is given up on at once if its
            # process exits); a remote one remote_timeout (None: wait for it).
            limits = [
                self.remote_timeout if bot is None else self.connect_timeout for bot in launched
            ]
            sessions = await self._take_sessions(wanted, limits, launched)
            if any(s is None for s in sessions):
                return _Played(self._unplayed(seats, sessions, uid, labels, launched))
            found = [s for s in sessions if s is not None]
            try:
                runner = MatchRunner(
                    self.game,
                    found,
                    time_control=self.time_control,
                    memory_limit_bytes=int((self.memory_mb or 0) * 1024 * 1024),
                    game_id=uid,
                    labels=labels,
                    observer=observer,
                    # The sandbox measures launched bots; remote ones only report.
                    self_reported_memory=[bot is None for bot in launched],
                )
            finally:
                for s in found:
                    self._reserved.discard(s.session_id)
            watchers = watch_launched(runner, launched)
            try:
                report = await runner.run()
            finally:
                for task in watchers:
                    task.cancel()
            await server.lobby.notify()
            for s, bot in zip(found, launched, strict=True):
                if bot is not None:
                    await s.goodbye("the game is over")
            note_launched(report, launched)
            outputs = [bot.output.text() if bot is not None else "" for bot in launched]
            return _Played(report, outputs)
        finally:
            for token in tokens:
                if isinstance(auth, LaunchTokens):
                    auth.tokens.pop(token, None)
            await asyncio.gather(
                *(b.stop() for b in launched if b is not None), return_exceptions=True
            )

    def _remote_predicate(self, v: BotVersionInfo) -> Callable[[BotSession], bool]:
        owner = self._owners.get(v.id)
        game = self.game.name

        def matches(s: BotSession) -> bool:
            return (
                s.identity.player_id == owner
                and s.identity.name == v.location
                and s.plays(game)
                and s.is_free()
                and s.session_id not in self._reserved
            )

        return matches

    async def _take_sessions(
        self,
        wanted: Sequence[Callable[[BotSession], bool]],
        limits: Sequence[float | None],
        launched: Sequence[LaunchedBot | None],
    ) -> list[BotSession | None]:
        """Sessions for every seat at once (taking them one by one could deadlock two games
        that wait for each other's bots). A seat still missing after its limit (seconds,
        ``None``: no limit), or whose launched process has exited, is ``None``."""
        lobby = self.server.lobby  # type: ignore[union-attr]
        now = time.monotonic()
        deadlines = [None if limit is None else now + limit for limit in limits]
        while True:
            since = lobby.generation
            chosen: list[BotSession | None] = []
            taken: set[str] = set()
            for predicate in wanted:
                pick = next(
                    (s for s in lobby.sessions() if s.session_id not in taken and predicate(s)),
                    None,
                )
                if pick is not None:
                    taken.add(pick.session_id)
                chosen.append(pick)
            if all(s is not None for s in chosen):
                self._reserved.update(taken)
                return chosen
            now = time.monotonic()
            waiting = [
                d
                for s, d, bot in zip(chosen, deadlines, launched, strict=True)
                if s is None and (d is None or d > now) and (bot is None or bot.running)
            ]
            if len(waiting) < chosen.count(None):
                return chosen  # a seat is given up on: the game cannot start
            left = None if None in waiting else min(d for d in waiting if d is not None) - now
            with contextlib.suppress(TimeoutError):
                # Also wake now and then to notice a launched process that exited.
                poll = 0.25 if any(b is not None for b in launched) else None
                wait = left if poll is None else (poll if left is None else min(left, poll))
                async with asyncio.timeout(wait):
                    await lobby.wait_change(since)

    def _unplayed(
        self,
        seats: Sequence[BotVersionInfo],
        sessions: Sequence[BotSession | None],
        uid: str,
        labels: dict[str, str],
        launched: Sequence[LaunchedBot | None] = (None, None),
    ) -> GameReport:
        from referee.match import SeatReport

        names = self.game.seat_names
        missing = [i for i, s in enumerate(sessions) if s is None]
        end: GameEnd
        if len(missing) == 2:
            end = verdicts.aborted("neither bot connected")
        else:
            seat = missing[0]
            bot = launched[seat] if seat < len(launched) else None
            if bot is not None and not bot.running:
                end = verdicts.fault(
                    Verdict.RUNTIME_ERROR,
                    seat,
                    f"{names[seat]}'s bot exited before connecting ({bot.describe_exit()})",
                )
            else:
                end = verdicts.fault(
                    Verdict.DISCONNECT,
                    seat,
                    f"{names[seat]} ({seats[seat].label}) was not connected",
                )
        state = self.game.new_state()
        return GameReport(
            game_id=uid,
            game=self.game.name,
            params=dict(self.game.params),
            seat_names=(names[0], names[1]),
            seats=[SeatReport(v.bot_name, v.version) for v in seats],
            time_control=self.time_control,
            memory_limit_bytes=int((self.memory_mb or 0) * 1024 * 1024),
            initial_position=state.to_string(),
            started_at="",
            labels=labels,
            final_position=state.to_string(),
            end=end,
        )

    def _finished_game(
        self,
        played: _Played,
        seats: Sequence[BotVersionInfo],
        pairing: PairingInfo,
        index: int,
        uid: str,
        started: datetime,
        finished: datetime,
    ) -> FinishedGame:
        return finished_game(
            played.report,
            self.game,
            seats,
            outputs=played.outputs,
            event=self.info.name,
            started=started,
            finished=finished,
            tournament_id=self.info.id,
            pairing_id=pairing.id,
            game_index=index,
            uid=uid,
        )
