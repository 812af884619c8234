"""Presence of remote entries while a referee runs a tournament: connected, waiting (a game
waits for it, at most the stated wait) or missing; and the notice a remote bot gets when it
joins under a name its owner has not entered."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from client_sdk.proto import referee_pb2 as pb
from referee.hosting.skipped import MissedGames
from referee.play.seats import SeatFinder
from referee.server.session import Identity
from referee.storage import BotVersionInfo, Repository, SourceKind
from referee.text.names import display

if TYPE_CHECKING:
    from referee.server.handle import ServerHandle, SessionPool
    from referee.storage import TournamentInfo
    from referee.tournament.runner import TournamentRunner


class Presence(StrEnum):
    CONNECTED = "connected"
    WAITING = "waiting"
    MISSING = "missing"
    #: Asked of a server that neither runs the tournament nor holds the bots' sessions.
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class EntryPresence:
    """One remote entry and where it is."""

    bot: str
    owner: str
    hello_name: str
    state: Presence


class Lines(Protocol):
    """Where presence changes are printed: the instructor's console, or the server's log."""

    def print(self, text: str, *, markup: bool, highlight: bool) -> None: ...


class PresenceBoard:
    """The remote entries of one running tournament, seen through its seat finder."""

    def __init__(
        self, repo: Repository, tournament: TournamentInfo, seats: SeatFinder, wait_s: float | None
    ) -> None:
        self.tournament = tournament
        self.seats = seats
        self.wait_s = wait_s
        #: The remote entries, and entry id -> its owner's player name (the identity its
        #: sessions carry).
        self.entries, self.owners = remote_entries(repo, tournament.id)
        self._last: dict[str, Presence] = {}

    def _connected(self, entry: BotVersionInfo) -> bool:
        return connected(self.seats.sessions, self.owners.get(entry.id), entry)

    def states(self) -> list[EntryPresence]:
        out = []
        for entry in self.entries:
            if self._connected(entry):
                state = Presence.CONNECTED
            elif self.seats.waiting.get(entry.id):
                state = Presence.WAITING
            else:
                state = Presence.MISSING
            owner = self.owners.get(entry.id, "")
            out.append(EntryPresence(entry.label, owner, entry.location, state))
        return out

    def changes(self) -> list[str]:
        """A line for each entry whose state changed since the last call (all, the first time)."""
        lines = []
        for p in self.states():
            if self._last.get(p.bot) is p.state:
                continue
            self._last[p.bot] = p.state
            lines.append(self.describe(p))
        return lines

    def describe(self, p: EntryPresence) -> str:
        if p.state is Presence.CONNECTED:
            return f"{p.bot} ({p.owner}'s bot) is connected"
        if p.state is Presence.WAITING:
            wait = f"up to {self.wait_s:g} s" if self.wait_s is not None else "until it comes"
            return (
                f"{p.bot} ({p.owner}'s bot) is not connected: a game waits for it ({wait}); "
                f"it joins with: python -m client_sdk --name {p.hello_name} --token ..."
            )
        return (
            f"{p.bot} ({p.owner}'s bot) is missing: not connected (its games forfeit after "
            f"{self.wait_s:g} s each)"
            if self.wait_s is not None
            else f"{p.bot} ({p.owner}'s bot) is missing: not connected"
        )

    def note_for(self, identity: Identity, hello: pb.Hello) -> str | None:
        """For the Welcome of a remote bot whose owner has entries here: which names they are
        entered under, when this bot's name is not one of them."""
        owner = identity.player_id
        if owner is None:
            return None
        mine = [e for e in self.entries if self.owners.get(e.id) == owner]
        if not mine or any(e.location == identity.name for e in mine):
            return None
        names = ", ".join(sorted({e.location for e in mine}))
        return (
            f"this bot joined as {identity.name!r}, which {owner} has not entered in the running "
            f"tournament {self.tournament.name}; {owner}'s entries there: {names} "
            f"(join with --name {mine[0].location})"
        )


def remote_entries(
    repo: Repository, tournament_id: int
) -> tuple[list[BotVersionInfo], dict[int, str]]:
    """A tournament's remote entries, and entry id -> its owner's player name."""
    entries = [
        e for e in repo.tournament_entrants(tournament_id) if e.source_kind is SourceKind.REMOTE
    ]
    owners = {e.id: repo.get_player(e.owner_id).name for e in entries if e.owner_id is not None}
    return entries, owners


def connected(sessions: SessionPool, owner: str | None, entry: BotVersionInfo) -> bool:
    """Whether a session of ``entry``'s owner, named for it, is among ``sessions``."""
    return any(
        s.identity.player_id == owner and s.identity.name == entry.location
        for s in sessions.sessions()
    )


class PresenceDesk:
    """The presence of remote entries as one server knows it, for its Arena service: the
    board of each tournament it runs (added as each starts), and, on a server that could run
    a tournament, its sessions and how long a game waits for a remote entry."""

    def __init__(self, sessions: SessionPool | None = None, wait_s: float | None = None) -> None:
        self.sessions = sessions
        self.wait_s = wait_s
        #: Tournament id -> the presence board of its remote entries.
        self.boards: dict[int, PresenceBoard] = {}


def watch_presence(
    repo: Repository,
    t: TournamentInfo,
    runner: TournamentRunner,
    server: ServerHandle | None,
    wait: float | None,
    err: Lines,
    missed: MissedGames | None = None,
    desk: PresenceDesk | None = None,
) -> asyncio.Task[None] | None:
    """With remote entries: tell their bots which names are entered (Welcome, until the task
    ends) and which games they missed (``missed``, delivered by its owner; else here while
    the tournament runs), show the instructor each entry's presence as it changes, and put
    it on ``desk`` for the Arena service."""
    seats = runner.player.seats
    if server is None or seats is None:
        return None
    board = PresenceBoard(repo, t, seats, wait)
    if not board.entries:
        return None
    server.add_note(board.note_for)
    if desk is not None:
        desk.boards[t.id] = board
    own = missed is None
    skipped = MissedGames(server.sessions) if missed is None else missed
    runner.player.on_absent = functools.partial(skipped.record, owners=seats.owners, wait_s=wait)

    async def report() -> None:
        delivery = asyncio.create_task(skipped.serve()) if own else None
        try:
            while True:
                for line in board.changes():
                    err.print(f"presence: {display(line, 1000)}", markup=False, highlight=False)
                await asyncio.sleep(1.0)
        finally:
            if delivery is not None:
                delivery.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await delivery

    task = asyncio.create_task(report())
    # Also when cancelled before it ever ran (a task's body, and its finally, would not run).
    task.add_done_callback(lambda _: server.drop_note(board.note_for))
    return task
