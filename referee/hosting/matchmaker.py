"""Casual pairing for ``referee serve``: any two free sessions that want the same game play it.

A bot is paired only for the games it asked for (``Hello.wanted_games``), else for the
server's default game (Tetress): one game per pairing, never a game a bot did not ask for.
Tournaments pair registered bots by their own schedule; this is the simple always-on mode (a
test ground for remote bots). Seats alternate between games of the same two bots.

Who meets whom is :class:`~referee.hosting.casual_pairing.CasualPairing`'s decision (longest
wait first, least recent opponent first, a cooling-off period for bots that fail to answer);
this module tells the bots and plays the games.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from client_sdk.proto import referee_pb2 as pb
from engine.adjudication.verdicts import Verdict
from engine.game import Game
from referee.errors import Refused
from referee.hosting.casual_conduct import CasualSeats, seat_conduct, settle
from referee.hosting.casual_pairing import CasualPairing, Seeker
from referee.hosting.challenges import (
    ChallengeDesk,
    challenger_of,
    is_challenger,
    shown,
    tell,
    too_many,
)
from referee.hosting.drain import drain_tasks
from referee.hosting.noshow import watch_first_moves
from referee.live.hub import LiveEnd, LiveHub, LiveObserver
from referee.match.clock import TimeControl
from referee.match.runner import GameReport, MatchRunner
from referee.server.capacity import DEFAULT_ANSWER_S, DEFAULT_MAX_CHALLENGES
from referee.server.handle import SessionPool
from referee.server.session import BotSession
from referee.telemetry.logs import get_logger

log = get_logger("referee.hosting.matchmaker")


class Matchmaker:
    """Pairs free sessions from ``lobby`` and plays games until stopped."""

    def __init__(
        self,
        lobby: SessionPool,
        games: Sequence[Game[Any]],
        *,
        time_control: TimeControl | None = None,
        memory_limit_bytes: int = 0,
        records_dir: str | None = None,
        on_report: Callable[[GameReport], None] | None = None,
        on_game: Callable[[MatchRunner[BotSession], GameReport], asyncio.Task[None] | None]
        | None = None,
        on_void: Callable[[Sequence[str]], None] | None = None,
        hub: LiveHub | None = None,
        mode: str = "casual",
        challenge_answer_s: float | None = None,
        reserved: Callable[[BotSession], bool] | None = None,
        max_challenges: int = DEFAULT_MAX_CHALLENGES,
        policy: CasualPairing | None = None,
    ) -> None:
        self.lobby = lobby
        self.games = list(games)
        self.time_control = time_control
        self.memory_limit_bytes = memory_limit_bytes
        self.records_dir = Path(records_dir) if records_dir else None
        self.on_report = on_report
        #: Also told which sessions played (e.g. to store the game for their registered bots);
        #: returns the task storing the game, if any: the game's end goes to other processes'
        #: spectators (the hub's relay) once it is done.
        self.on_game = on_game
        #: Told the ids of earlier games a player's run of casual forfeits fed (to void them).
        self.on_void = on_void
        #: Spectators (the web front, the Arena service) follow the games through this hub.
        self.hub = hub
        #: How spectators see these games: ``ladder`` when they are stored and rated, else
        #: ``casual``.
        self.mode = mode
        #: Sessions casual pairing leaves alone (bots a tournament on this server needs).
        self.reserved = reserved
        self.running: set[asyncio.Task[GameReport]] = set()
        self.finished = 0
        self._pairings: Counter[tuple[str, str]] = Counter()
        self.policy = policy or CasualPairing()
        #: Session ids the policy knows of (told when they leave), and per running casual
        #: game its seats as pairing saw them at the start (probation, first-move windows).
        self._known: set[str] = set()
        self._casual: dict[str, CasualSeats] = {}
        self._accepting = True
        answer_s = DEFAULT_ANSWER_S if challenge_answer_s is None else challenge_answer_s
        self.desk = ChallengeDesk(lobby, answer_s, reserved=self._reserved)
        #: Open challenges per player at most; a flood beyond it is refused at once.
        self.max_challenges = max_challenges
        #: Challengers already taken up (session id -> whose challenge), and free sessions
        #: already told they wait.
        self._challengers: dict[str, str] = {}
        self._capped: set[str] = set()
        self._told_waiting: set[str] = set()
        self._chores: set[asyncio.Task[None]] = set()

    def stop_pairing(self) -> None:
        self._accepting = False

    async def run(self) -> None:
        """Pair and play until cancelled or :meth:`stop_pairing`; running games are awaited by
        :meth:`drain`."""
        while self._accepting:
            since = self.lobby.generation
            self._take_challenges()
            pair = self._find_pair()
            if pair is None:
                self._tell_waiting()
                await self._wait_change(since)
                continue
            first, second, game = pair
            # Seats alternate between games of the same two sessions, whoever was chosen first.
            if first.session_id > second.session_id:
                first, second = second, first
            key = (first.session_id, second.session_id)
            if self._pairings[key] % 2:
                first, second = second, first
            self._pairings[key] += 1
            seats = seat_conduct(self.policy, self._seeker(first), self._seeker(second))
            task = self._start(first, second, game, {"mode": "casual"})
            self._casual[task.get_name()] = seats

    async def _wait_change(self, since: int) -> None:
        """Wait for the lobby to change, or for a bot's cooling-off period to end."""
        now = time.monotonic()
        release = self.policy.next_release([self._seeker(s) for s in self._free()], now)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(None if release is None else release - now + 0.01):
                await self.lobby.wait_change(since)

    def _start(
        self, first: BotSession, second: BotSession, game: Game[Any], labels: dict[str, str]
    ) -> asyncio.Task[GameReport]:
        """Create the game's runner (the sessions are busy from here) and play it."""
        self._told_waiting -= {first.session_id, second.session_id}
        runner = MatchRunner(
            game,
            [first, second],
            time_control=self.time_control,
            memory_limit_bytes=self.memory_limit_bytes,
            labels={**labels, **({"channel": first.channel} if first.channel else {})},
        )
        if self.hub is not None:
            self.hub.start(
                runner.game_id,
                game.name,
                [shown(first), shown(second)],
                game.seat_names,
                runner.state.to_string(),
                mode=self.mode,
            )
            runner.observer = LiveObserver(self.hub, runner.game_id)
        task = asyncio.create_task(self._play(runner), name=runner.game_id)
        self.running.add(task)
        task.add_done_callback(self.running.discard)
        return task

    def _chore(self, work: Coroutine[object, object, None]) -> None:
        task: asyncio.Task[None] = asyncio.create_task(work)
        self._chores.add(task)
        task.add_done_callback(self._chores.discard)

    def _take_challenges(self) -> None:
        sessions = self.lobby.sessions()
        here = {s.session_id for s in sessions}
        # Forget sessions that left: a challenge is open until its session ends.
        self._challengers = {k: v for k, v in self._challengers.items() if k in here}
        self._capped &= here
        self._told_waiting &= here
        for session in sessions:
            sid = session.session_id
            if not is_challenger(session) or sid in self._challengers or sid in self._capped:
                continue
            who = challenger_of(session)
            open_now = sum(1 for owner in self._challengers.values() if owner == who)
            if open_now >= self.max_challenges:
                self._capped.add(sid)
                self._chore(self._refuse(session, too_many(open_now, self.max_challenges)))
                continue
            self._challengers[sid] = who
            self._chore(self._challenge(session))

    async def _refuse(self, challenger: BotSession, reason: str) -> None:
        log.info("challenge_refused", challenger=shown(challenger), reason=reason)
        await tell(challenger, pb.NOTICE_KIND_CHALLENGE_REFUSED, reason)
        await challenger.goodbye(reason)

    async def _challenge(self, challenger: BotSession) -> None:
        """Arrange one challenge, play its game, and end the challenger's session."""
        try:
            agreed = await self.desk.arrange(challenger, self.games)
        except Refused as exc:
            await self._refuse(challenger, str(exc))
            return
        target = challenger.hello.challenge.strip()
        try:
            if not challenger.is_free():
                await challenger.goodbye("the challenger left before its game")
                return
            await tell(
                challenger,
                pb.NOTICE_KIND_CHALLENGE_ACCEPTED,
                f"{target} accepted your challenge: {agreed.game.name} starts, you move first",
                agreed.challenge_id,
            )
            await tell(
                agreed.opponent,
                pb.NOTICE_KIND_GAME_EXPECTED,
                f"your challenge game against {shown(challenger)} starts ({agreed.game.name})",
                agreed.challenge_id,
            )
            labels = {"mode": "challenge", "challenge": agreed.challenge_id}
            task = self._start(challenger, agreed.opponent, agreed.game, labels)
        finally:
            self.desk.release(agreed.opponent)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(task)
        await challenger.goodbye("your challenge game is over")

    def _tell_waiting(self) -> None:
        """Say once to each free pool session that it waits (until it is paired again)."""
        now = time.monotonic()
        for session in self.lobby.sessions():
            if session.session_id in self._told_waiting or self.desk.withheld(session):
                continue
            if not session.is_free() or self.policy.free_from(self._seeker(session)) > now:
                continue  # a bot cooling off was told so, and why; one resting is not waiting
            self._told_waiting.add(session.session_id)
            games = ", ".join(g.name for g in self.games if session.pairs_casually(g.name))
            where = f" in channel {session.channel}" if session.channel else ""
            text = f"waiting: no opponent for {games or 'your game'}{where} yet"
            self._chore(tell(session, pb.NOTICE_KIND_WAITING, text))

    def _free(self) -> list[BotSession]:
        """Sessions casual pairing may give a game now (cooling-off aside)."""
        return [
            s
            for s in self.lobby.sessions()
            if s.is_free() and not self.desk.withheld(s) and not self._reserved(s)
        ]

    def _seeker(self, session: BotSession) -> Seeker:
        games = tuple(g.name for g in self.games if session.pairs_casually(g.name))
        owner = session.identity.player_id
        # A stored player's conduct is the player's, whichever bot name a session gives: a
        # fresh name per game starts no fresh record.
        conduct = f"player:{owner}" if owner is not None else ""
        return Seeker(session.session_id, session.channel, owner, games, conduct)

    def _find_pair(self) -> tuple[BotSession, BotSession, Game[Any]] | None:
        here = {s.session_id for s in self.lobby.sessions()}
        for gone in self._known - here:
            self.policy.left(gone)
        self._known = here
        free = {s.session_id: s for s in self._free()}
        seekers = [self._seeker(s) for s in free.values()]
        pairing = self.policy.next_pair(seekers, time.monotonic())
        if pairing is None:
            return None
        self.policy.started(pairing)
        game = next(g for g in self.games if g.name == pairing.game)
        return free[pairing.first], free[pairing.second], game

    def _settle(
        self,
        runner: MatchRunner[BotSession],
        report: GameReport,
        seats: CasualSeats,
        no_show: int | None,
    ) -> None:
        """Record the casual game's conduct, tell each bot sent to cool off why, and have the
        games a player's run of forfeits fed voided."""
        settled = settle(self.policy, seats, report, no_show, time.monotonic())
        if settled.voided:
            log.info("casual_forfeits_voided", game_id=report.game_id, voided=settled.voided)
            if self.on_void is not None:
                self.on_void(settled.voided)
        for seat, text in settled.notices:
            session = runner.sessions[seat]
            if not session.closed.is_set():
                log.info("casual_cooling_off", session=session.session_id, notice=text)
                self._chore(tell(session, pb.NOTICE_KIND_COOLING_OFF, text))

    def _reserved(self, session: BotSession) -> bool:
        return self.reserved is not None and self.reserved(session)

    async def _play(self, runner: MatchRunner[BotSession]) -> GameReport:
        seats = self._casual.pop(runner.game_id, None)
        watcher = None
        if seats is not None and any(w is not None for w in seats.windows):
            watcher = asyncio.create_task(watch_first_moves(runner, seats.windows))
        ended = False
        try:
            report = await runner.run()
            ended = True
        except asyncio.CancelledError:
            # Stopped at shutdown: the runner recorded it as aborted; keep that record too.
            if runner.report.end is not None:
                self._save(runner.report, runner.game)
            raise
        finally:
            if watcher is not None:
                watcher.cancel()
            if self.hub is not None:
                # A game that ended without the runner's on_end (cancelled) leaves the list.
                self.hub.finish(
                    runner.game_id, LiveEnd("*", Verdict.ABORTED, Verdict.ABORTED, "stopped", None)
                )
                if not ended:  # cut off: nothing stores it, its end goes out now
                    self.hub.release(runner.game_id)
        self.finished += 1
        ended_at = time.monotonic()
        for session in runner.sessions:
            self.policy.finished(session.session_id, ended_at)
        if seats is not None:
            no_show = None
            if watcher is not None and watcher.done() and not watcher.cancelled():
                no_show = watcher.result() if watcher.exception() is None else None
            self._settle(runner, report, seats, no_show)
        self._save(report, runner.game)
        if self.on_report is not None:
            self.on_report(report)
        storing = self.on_game(runner, report) if self.on_game is not None else None
        if self.hub is not None:
            self._release_once(runner.game_id, storing)
        await self.lobby.notify()
        return report

    def _release_once(self, uid: str, storing: asyncio.Task[None] | None) -> None:
        """The game's end to the hub's relay once ``storing`` is done (now without one): a
        casual game is never played again, so its end stands whether its row was written or
        not (a private game's is not), but once written, it is there to be opened."""
        hub = self.hub
        assert hub is not None
        if storing is None:
            hub.release(uid)
        else:
            storing.add_done_callback(lambda _: hub.release(uid))

    def _save(self, report: GameReport, game: Game[Any]) -> None:
        if self.records_dir is None:
            return
        from referee.match.records import write_record_file

        try:
            self.records_dir.mkdir(parents=True, exist_ok=True)
            write_record_file(self.records_dir / f"{report.game_id}.pgn", report, game)
        except Exception:
            log.exception("record_failed", game_id=report.game_id)

    async def drain(self, grace: float) -> None:
        """Let running games finish for ``grace`` seconds, then stop the rest (aborted)."""
        await drain_tasks(self.running, grace)
