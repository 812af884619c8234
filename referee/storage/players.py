"""Players (and teams) and their access tokens."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from referee.storage import tokens
from referee.storage.base import AreaRepository, rowcount
from referee.storage.enums import PlayerKind
from referee.storage.errors import ConflictError, NotFoundError
from referee.storage.models import Player, Token, utcnow


@dataclass(frozen=True, slots=True)
class PlayerInfo:
    id: int
    name: str
    kind: PlayerKind
    display_name: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """A token's public facts (never its secret, never its hash)."""

    key_id: str
    player_id: int
    label: str | None
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class PlayerRepository(AreaRepository):
    """Players, teams and their tokens (only token hashes are stored)."""

    def create_player(
        self, name: str, *, kind: PlayerKind = PlayerKind.PLAYER, display_name: str | None = None
    ) -> PlayerInfo:
        """A new player or team; :class:`ConflictError` if the name is taken."""
        try:
            with self.db.write() as s:
                player = Player(name=name, kind=PlayerKind(kind).value, display_name=display_name)
                s.add(player)
                s.flush()
                return player_info(player)
        except IntegrityError as exc:
            raise ConflictError(f"a player named {name!r} already exists") from exc

    def get_player(self, name_or_id: str | int) -> PlayerInfo:
        with self.db.read() as s:
            return player_info(find_player(s, name_or_id))

    def list_players(self) -> list[PlayerInfo]:
        with self.db.read() as s:
            return [player_info(p) for p in s.scalars(select(Player).order_by(Player.name))]

    def issue_token(self, player: str | int, *, label: str | None = None) -> str:
        """A new token for ``player``. The returned text is the only copy: only its hash is
        stored, so it cannot be shown again."""
        new = tokens.generate_token()
        with self.db.write() as s:
            owner = find_player(s, player)
            s.add(
                Token(
                    player_id=owner.id,
                    key_id=new.hashed.key_id,
                    algorithm=new.hashed.algorithm,
                    salt=new.hashed.salt,
                    digest=new.hashed.digest,
                    label=label,
                )
            )
        return new.clear

    def authenticate(self, token: str) -> PlayerInfo | None:
        """The player owning ``token``, or ``None`` for an unknown, wrong, malformed or
        revoked token."""
        try:
            key_id, secret = tokens.split_token(token)
        except tokens.TokenFormatError:
            return None
        with self.db.read() as s:
            row = s.scalars(
                select(Token).where(Token.key_id == key_id).options(selectinload(Token.player))
            ).one_or_none()
            if row is None:
                tokens.burn_verification()
                return None
            stored = tokens.TokenHash(row.key_id, row.algorithm, row.salt, row.digest)
            if not tokens.verify_secret(secret, stored) or row.revoked_at is not None:
                return None
            player = player_info(row.player)
        self._note_use(key_id)
        return player

    def active_key_owner(self, key_id: str) -> PlayerInfo | None:
        """The owner of token ``key_id`` while it is not revoked. No secret is checked: for a
        caller that verified this token's secret before (the server's verified-token memory),
        so that revocation still takes effect at the next handshake."""
        with self.db.read() as s:
            row = s.scalars(
                select(Token).where(Token.key_id == key_id).options(selectinload(Token.player))
            ).one_or_none()
            if row is None or row.revoked_at is not None:
                return None
            player = player_info(row.player)
        self._note_use(key_id)
        return player

    def _note_use(self, key_id: str) -> None:
        with self.db.write() as s:
            s.execute(update(Token).where(Token.key_id == key_id).values(last_used_at=utcnow()))

    def list_tokens(self, player: str | int) -> list[TokenInfo]:
        with self.db.read() as s:
            owner = find_player(s, player)
            rows = s.scalars(select(Token).where(Token.player_id == owner.id).order_by(Token.id))
            return [
                TokenInfo(
                    r.key_id, r.player_id, r.label, r.created_at, r.last_used_at, r.revoked_at
                )
                for r in rows
            ]

    def revoke_token(self, key_id: str) -> bool:
        """Revoke one token by its public key id; ``False`` if unknown or already revoked."""
        with self.db.write() as s:
            result = s.execute(
                update(Token)
                .where(Token.key_id == key_id, Token.revoked_at.is_(None))
                .values(revoked_at=utcnow())
            )
            return rowcount(result) == 1


def find_player(s: Session, name_or_id: str | int) -> Player:
    if isinstance(name_or_id, int):
        row = s.get(Player, name_or_id)
    else:
        row = s.scalars(select(Player).where(Player.name == name_or_id)).one_or_none()
    if row is None:
        raise NotFoundError(f"no player {name_or_id!r}")
    return row


def player_info(row: Player) -> PlayerInfo:
    return PlayerInfo(row.id, row.name, PlayerKind(row.kind), row.display_name, row.created_at)
