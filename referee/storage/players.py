"""Players (and teams) and their access tokens."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from referee.errors import Refused
from referee.storage import tokens
from referee.storage.base import AreaRepository, rowcount
from referee.storage.enums import PlayerKind, Role
from referee.storage.errors import ConflictError, NotFoundError
from referee.storage.models import Player, Token, utcnow
from referee.storage.names import check_player_name
from referee.text.names import display


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
    role: Role = Role.STUDENT
    expires_at: datetime | None = None

    def state(self, now: datetime | None = None) -> str:
        """``active``, ``revoked`` or ``expired``."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= (now or utcnow()):
            return "expired"
        return "active"


@dataclass(frozen=True, slots=True)
class TokenOwner:
    """Who a verified token speaks for: its player (or team), its role and its key id."""

    player: PlayerInfo
    role: Role
    key_id: str
    expires_at: datetime | None


class TokenRejected(Refused):
    """A token that does not open anything; the message says why and may be shown to its
    presenter (it names no secret). ``key_id`` is the token's public part, if it has one;
    ``secret_ok`` is true when the secret was right (a revoked or expired token)."""

    def __init__(self, message: str, key_id: str = "", *, secret_ok: bool = False) -> None:
        super().__init__(message)
        self.key_id = key_id
        self.secret_ok = secret_ok


#: ``last_used_at`` is written at most this often per token, so that checking a token on
#: every Arena call does not make every call a database write.
_NOTE_USE_EVERY = timedelta(seconds=60)


class PlayerRepository(AreaRepository):
    """Players, teams and their tokens (only token hashes are stored)."""

    def create_player(
        self, name: str, *, kind: PlayerKind = PlayerKind.PLAYER, display_name: str | None = None
    ) -> PlayerInfo:
        """A new player or team; :class:`ConflictError` if the name is taken or not allowed
        (:mod:`referee.text.names`). The display name is kept cleaned for display."""
        check_player_name(name)
        shown = display(display_name) if display_name else None
        try:
            with self.db.write() as s:
                player = Player(name=name, kind=PlayerKind(kind).value, display_name=shown or None)
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

    def issue_token(
        self,
        player: str | int,
        *,
        label: str | None = None,
        role: Role = Role.STUDENT,
        expires_at: datetime | None = None,
    ) -> str:
        """A new token for ``player`` with ``role``, valid until ``expires_at`` (``None``:
        until revoked). The returned text is the only copy: only its keyed hash is stored,
        so it cannot be shown again."""
        with self.db.write() as s:
            row, clear = new_token(
                find_player(s, player).id, self.db.token_key, label, role, expires_at
            )
            s.add(row)
        return clear

    def check_token(self, token: str, *, now: datetime | None = None) -> TokenOwner:
        """Who ``token`` speaks for, or :class:`TokenRejected` saying why not (malformed,
        unknown, wrong secret, revoked, expired).

        The secret is checked in constant time against the keyed hash. A token stored with
        the old scrypt hash is verified with it and then re-hashed with the HMAC, so it
        costs one slow check in its life. Every server view that needs to know who calls
        (the Play handshake, the Arena and Submissions services) goes through this, usually
        via :class:`referee.server.access.Gate`, which adds a cache and throttling.
        """
        try:
            key_id, secret = tokens.split_token(token)
        except tokens.TokenFormatError as exc:
            raise TokenRejected(str(exc), tokens.public_key_id(token)) from None
        key = self.db.token_key
        with self.db.read() as s:
            row = s.scalars(
                select(Token).where(Token.key_id == key_id).options(selectinload(Token.player))
            ).one_or_none()
            if row is None:
                tokens.burn_verification(key)
                raise TokenRejected("unknown token", key_id)
            stored = tokens.TokenHash(row.key_id, row.algorithm, row.salt, row.digest)
            try:
                right = tokens.verify_secret(secret, stored, key)
            except tokens.WrongTokenKey as exc:
                raise TokenRejected(f"unknown token ({exc})", key_id) from None
            if not right:
                raise TokenRejected("unknown token", key_id)
            owner = _owner(row, now or utcnow())
            stale = (
                row.last_used_at is None or (now or utcnow()) - row.last_used_at > _NOTE_USE_EVERY
            )
        rehash = tokens.hash_secret(key_id, secret, key) if tokens.is_legacy(stored) else None
        if stale or rehash is not None:
            self._note_use(key_id, rehash)
        return owner

    def resolve_token(self, token: str) -> TokenOwner | None:
        """``(player, role)`` behind ``token`` as a :class:`TokenOwner`, or ``None`` when it
        opens nothing (see :meth:`check_token`, which also says why)."""
        try:
            return self.check_token(token)
        except TokenRejected:
            return None

    def authenticate(self, token: str) -> PlayerInfo | None:
        """The player owning ``token``, or ``None`` for an unknown, wrong, malformed,
        revoked or expired token."""
        owner = self.resolve_token(token)
        return owner.player if owner is not None else None

    def token_owner_by_id(self, key_id: str) -> TokenOwner:
        """The owner of token ``key_id`` while it is neither revoked nor expired
        (:class:`TokenRejected` otherwise). No secret is checked: for a caller that verified
        this token's secret before (the server's verified-token memory), so that revocation
        and expiry still take effect at the next use."""
        with self.db.read() as s:
            row = s.scalars(
                select(Token).where(Token.key_id == key_id).options(selectinload(Token.player))
            ).one_or_none()
            if row is None:
                raise TokenRejected("unknown token", key_id)
            now = utcnow()
            owner = _owner(row, now)
            stale = row.last_used_at is None or now - row.last_used_at > _NOTE_USE_EVERY
        if stale:
            self._note_use(key_id, None)
        return owner

    def _note_use(self, key_id: str, rehash: tokens.TokenHash | None) -> None:
        values: dict[str, object] = {"last_used_at": utcnow()}
        if rehash is not None:
            values.update(algorithm=rehash.algorithm, salt=rehash.salt, digest=rehash.digest)
        with self.db.write() as s:
            s.execute(update(Token).where(Token.key_id == key_id).values(**values))

    def list_tokens(self, player: str | int) -> list[TokenInfo]:
        with self.db.read() as s:
            owner = find_player(s, player)
            rows = s.scalars(select(Token).where(Token.player_id == owner.id).order_by(Token.id))
            return [token_info(r) for r in rows]

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


def token_info(r: Token) -> TokenInfo:
    return TokenInfo(
        r.key_id,
        r.player_id,
        r.label,
        r.created_at,
        r.last_used_at,
        r.revoked_at,
        Role(r.role),
        r.expires_at,
    )


def _owner(row: Token, now: datetime) -> TokenOwner:
    """The row's owner, or :class:`TokenRejected` if it is revoked or expired (only said to
    someone who presented the right secret or whose secret was verified before)."""
    if row.revoked_at is not None:
        raise TokenRejected("revoked token", row.key_id, secret_ok=True)
    if row.expires_at is not None and row.expires_at <= now:
        stamp = row.expires_at.isoformat(timespec="seconds").replace("+00:00", "Z")
        raise TokenRejected(f"expired token (expired at {stamp})", row.key_id, secret_ok=True)
    return TokenOwner(player_info(row.player), Role(row.role), row.key_id, row.expires_at)


def player_info(row: Player) -> PlayerInfo:
    return PlayerInfo(row.id, row.name, PlayerKind(row.kind), row.display_name, row.created_at)


def new_token(
    player_id: int,
    key: bytes,
    label: str | None,
    role: Role,
    expires_at: datetime | None = None,
) -> tuple[Token, str]:
    """A new token's row (only its keyed hash) and its text, the only copy there will be."""
    new = tokens.generate_token(key)
    row = Token(
        player_id=player_id,
        key_id=new.hashed.key_id,
        algorithm=new.hashed.algorithm,
        salt=new.hashed.salt,
        digest=new.hashed.digest,
        label=label,
        role=Role(role).value,
        expires_at=expires_at,
    )
    return row, new.clear
