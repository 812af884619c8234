"""A class roster applied to the players table in one transaction.

Each roster entry is a login (a player), an optional display name, an optional team (a player
of kind ``team``) and the role of the token the login gets. Applying a roster creates missing
players and teams, updates display names and team membership, and issues a token only to a
login without an active one: the new tokens are returned once, in the clear, and only their
keyed hashes are stored. Logins not on the roster are left alone. Applying the same roster
again changes nothing and issues nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from referee.storage.db import Database
from referee.storage.enums import PlayerKind, Role
from referee.storage.errors import ConflictError
from referee.storage.models import Player, Token, utcnow
from referee.storage.names import check_player_name
from referee.storage.players import new_token
from referee.text.names import display


@dataclass(frozen=True, slots=True)
class RosterEntry:
    """One line of a roster (already checked: names follow the naming rules)."""

    login: str
    display_name: str | None
    team: str | None
    role: Role
    #: The roster file's line, for messages.
    line: int = 0


@dataclass(frozen=True, slots=True)
class IssuedToken:
    login: str
    display_name: str | None
    team: str | None
    role: Role
    token: str


@dataclass
class RosterResult:
    """What applying a roster did."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    teams_created: list[str] = field(default_factory=list)
    tokens: list[IssuedToken] = field(default_factory=list)
    #: Things the instructor should know (e.g. a login whose token has another role).
    notes: list[str] = field(default_factory=list)


def apply_roster(
    db: Database, entries: Sequence[RosterEntry], *, issue_tokens: bool = True
) -> RosterResult:
    """Create or update every entry's player and team and issue missing tokens (unless
    ``issue_tokens`` is false: then a login without one gets a note), all in one transaction
    (:class:`ConflictError`, and nothing written, when a name is taken by the other kind: a
    team named like a player or the reverse)."""
    result = RosterResult()
    key = db.token_key if issue_tokens else None
    try:
        with db.write() as s:
            teams = _teams(s, sorted({e.team for e in entries if e.team}), result)
            for entry in entries:
                _apply_one(s, key, entry, teams, result)
    except IntegrityError as exc:
        raise ConflictError(f"the roster could not be applied: {exc.orig}") from exc
    return result


def _teams(s: Session, names: Sequence[str], result: RosterResult) -> dict[str, Player]:
    found: dict[str, Player] = {}
    for name in names:
        team = s.scalars(select(Player).where(Player.name == name)).one_or_none()
        if team is None:
            team = Player(name=check_player_name(name), kind=PlayerKind.TEAM.value)
            s.add(team)
            s.flush()
            result.teams_created.append(name)
        elif team.kind != PlayerKind.TEAM.value:
            raise ConflictError(f"team {name!r} is already the name of a player, not a team")
        found[name] = team
    return found


def without_tokens(db: Database, entries: Sequence[RosterEntry]) -> list[str]:
    """The roster's logins that hold no active token (a login not yet a player holds none)."""
    with db.read() as s:
        players = s.scalars(select(Player).where(Player.name.in_([e.login for e in entries])))
        holding = {p.name for p in players if any(_active(t) for t in p.tokens)}
    return [e.login for e in entries if e.login not in holding]


def _apply_one(
    s: Session,
    key: bytes | None,
    entry: RosterEntry,
    teams: dict[str, Player],
    result: RosterResult,
) -> None:
    player = s.scalars(select(Player).where(Player.name == entry.login)).one_or_none()
    shown = display(entry.display_name) if entry.display_name else None
    team_id = teams[entry.team].id if entry.team else None
    if player is None:
        player = Player(
            name=check_player_name(entry.login),
            kind=PlayerKind.PLAYER.value,
            display_name=shown,
            team_id=team_id,
        )
        s.add(player)
        s.flush()
        result.created.append(entry.login)
    elif player.kind != PlayerKind.PLAYER.value:
        raise ConflictError(f"line {entry.line}: login {entry.login!r} is the name of a team")
    elif (player.display_name, player.team_id) != (shown or player.display_name, team_id):
        player.display_name = shown or player.display_name
        player.team_id = team_id
        result.updated.append(entry.login)
    else:
        result.unchanged.append(entry.login)
    active = [t for t in player.tokens if _active(t)]
    if not active and key is None:
        result.notes.append(f"{entry.login} holds no token: import again to issue one")
    elif not active and key is not None:
        row, clear = new_token(player.id, key, "roster", entry.role)
        s.add(row)
        result.tokens.append(IssuedToken(entry.login, shown, entry.team, entry.role, clear))
    elif all(t.role != entry.role.value for t in active):
        roles = ", ".join(sorted({t.role for t in active}))
        result.notes.append(
            f"{entry.login} holds a {roles} token but the roster says {entry.role.value}: "
            "revoke it (referee player revoke) and import again to issue the roster's role"
        )


def _active(token: Token) -> bool:
    if token.revoked_at is not None:
        return False
    return token.expires_at is None or token.expires_at > utcnow()


def team_of(db: Database, login: str) -> str | None:
    """The name of ``login``'s team (``None``: no team, or no such player)."""
    with db.read() as s:
        player = s.scalars(select(Player).where(Player.name == login)).one_or_none()
        if player is None or player.team_id is None:
            return None
        team = s.get(Player, player.team_id)
        return team.name if team is not None else None
