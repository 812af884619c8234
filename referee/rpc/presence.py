"""The presence of a tournament's remote entries on the wire (the Arena service's
``GetTournamentPresence`` and the ``presence`` of ``GetTournament``), read from the server's
:class:`~referee.hosting.presence.PresenceDesk`."""

from __future__ import annotations

from client_sdk.proto import arena_pb2 as apb
from referee.hosting.presence import (
    EntryPresence,
    Presence,
    PresenceDesk,
    connected,
    remote_entries,
)
from referee.storage import Repository, TournamentInfo


def presence_reply(
    repo: Repository, t: TournamentInfo, desk: PresenceDesk
) -> apb.TournamentPresence:
    """From the board of the run when this server runs ``t``; else, on a server that could
    run it (one with sessions), whether each remote entry's bot is connected; else
    ``unknown``."""
    board = desk.boards.get(t.id)
    if board is not None:
        states, wait = board.states(), board.wait_s
    else:
        entries, owners = remote_entries(repo, t.id)
        wait = desk.wait_s
        states = []
        for e in entries:
            owner = owners.get(e.id, "")
            if desk.sessions is None:
                state = Presence.UNKNOWN
            else:
                on = connected(desk.sessions, owner, e)
                state = Presence.CONNECTED if on else Presence.MISSING
            states.append(EntryPresence(e.label, owner, e.location, state))
    return apb.TournamentPresence(
        tournament=t.name,
        status=str(t.status),
        running=board is not None,
        wait_s=wait or 0.0,
        entries=_wire(states, wait),
    )


def running_presence(desk: PresenceDesk, tournament_id: int) -> list[apb.EntryPresence]:
    """Each remote entry's presence while this server runs the tournament (else none)."""
    board = desk.boards.get(tournament_id)
    return [] if board is None else _wire(board.states(), board.wait_s)


def _wire(states: list[EntryPresence], wait: float | None) -> list[apb.EntryPresence]:
    return [
        apb.EntryPresence(
            bot=p.bot,
            owner=p.owner,
            hello_name=p.hello_name,
            state=str(p.state),
            wait_s=wait or 0.0,
        )
        for p in states
    ]
