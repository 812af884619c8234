"""Telling a remote entry's bot about the tournament games it missed.

When a game cannot start because a remote entry had no session within the wait, the referee
scores it (a forfeit, or an abort when neither bot came) and records here, per entry, a
sentence saying which game it was and why. Each is sent as a ``SKIPPED`` notice, which the
SDK prints as ``skipped: ...``:

* at once to every bot its owner has connected under another name (the usual cause: a student
  who joined without the exact ``--name`` of the entry), with the name to use;
* to the entry's own bot when it connects, then or later, even after the tournament ended
  (as long as this referee runs): a student who joins late is told which games went without
  them. Each sentence reaches the entry's bot once.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from client_sdk.proto import referee_pb2 as pb
from referee.hosting.challenges import tell
from referee.match.runner import GameReport
from referee.server.handle import SessionPool
from referee.server.session import BotSession
from referee.storage import BotVersionInfo

#: Sentences kept per entry (the most recent); older ones are dropped untold.
KEEP = 50


@dataclass(slots=True)
class Missed:
    seq: int
    text: str
    #: The owner's bots under other names that were connected when it was recorded, still
    #: to be told (by session id).
    others: set[str] = field(default_factory=set)
    told_entry: bool = False


def game_words(labels: Mapping[str, str]) -> str:
    """``tournament 'week3' round 2, board 1, game 4`` from a tournament game's labels."""
    words = f"tournament '{labels.get('tournament', '?')}'"
    if labels.get("tournamentRound"):
        words += f" round {labels['tournamentRound']}"
    parts = [f"board {labels['board']}" if labels.get("board") else ""]
    parts.append(f"game {labels['leg']}" if labels.get("leg") else "")
    return ", ".join([words, *(p for p in parts if p)])


def outcome_words(report: GameReport, seat: int, label: str) -> str:
    end = report.end
    if end is None or end.aborted:
        return "it was not scored (neither bot was there) and is played again later"
    if end.winner is None:
        return f"it was scored as a draw ({end.verdict})"
    side = "a loss" if end.winner != seat else "a win"
    return f"it counts as {side} for {label} ({end.verdict})"


class MissedGames:
    """The missed games of remote entries on one referee, and telling their bots."""

    def __init__(self, lobby: SessionPool) -> None:
        self.lobby = lobby
        #: (owner, hello name) -> the sentences for that entry's bot.
        self.notes: dict[tuple[str, str], list[Missed]] = {}
        self._seq = itertools.count(1)
        self._changed = asyncio.Event()

    def _sessions_of(self, owner: str) -> list[BotSession]:
        return [s for s in self.lobby.sessions() if s.identity.player_id == owner]

    def record(
        self,
        seats: Sequence[BotVersionInfo],
        absent: Sequence[int],
        labels: Mapping[str, str],
        report: GameReport,
        *,
        owners: Mapping[int, str],
        wait_s: float | None,
    ) -> None:
        """The game of ``seats`` was not played with the remote seats in ``absent``."""
        for seat in absent:
            entry, opponent = seats[seat], seats[1 - seat]
            owner = owners.get(entry.id)
            if owner is None:
                continue
            mine = self._sessions_of(owner)
            named = [s for s in mine if s.identity.name == entry.location]
            within = f"within the {wait_s:g} s wait" if wait_s is not None else "in time"
            why = (
                f"it was connected but had no free game slot {within}"
                if named
                else f"it was not connected {within}"
            )
            text = (
                f"your {game_words(labels)} against {opponent.label} was not played with your "
                f"entry {entry.label}: {why}; {outcome_words(report, seat, entry.label)}"
            )
            others = {s.session_id for s in mine if s.identity.name != entry.location}
            kept = self.notes.setdefault((owner, entry.location), [])
            kept.append(Missed(next(self._seq), text, others))
            del kept[:-KEEP]
        self._changed.set()

    def _due(self, session: BotSession) -> list[str]:
        """The sentences ``session`` has not been told yet (marking them told)."""
        owner = session.identity.player_id
        due = []
        for (who, name), kept in self.notes.items():
            if who != owner:
                continue
            for item in kept:
                if session.identity.name == name and not item.told_entry:
                    item.told_entry = True
                    due.append(item.text)
                elif session.session_id in item.others:
                    item.others.discard(session.session_id)
                    due.append(
                        f"{item.text}; this bot joined as {session.identity.name!r}: the "
                        f"entry's bot joins with --name {name}"
                    )
        return due

    async def deliver(self) -> int:
        """Send every sentence due to a connected bot; how many were sent."""
        self._changed.clear()
        sent = 0
        here = set()
        # Only the owners with missed games are looked at (most lobby changes concern none).
        owners = {who for who, _ in self.notes}
        for session in self.lobby.sessions():
            here.add(session.session_id)
            if session.identity.player_id not in owners:
                continue
            for text in self._due(session):
                await tell(session, pb.NOTICE_KIND_SKIPPED, text)
                sent += 1
        for kept in self.notes.values():
            for item in kept:
                item.others &= here  # a bot that left is not told later
        return sent

    async def serve(self) -> None:
        """Deliver whenever a game is missed or a bot arrives, until cancelled."""
        while True:
            since = self.lobby.generation
            await self.deliver()
            changed = asyncio.ensure_future(self._changed.wait())
            arrived = asyncio.ensure_future(self.lobby.wait_change(since))
            try:
                await asyncio.wait({changed, arrived}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in (changed, arrived):
                    waiter.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await waiter
