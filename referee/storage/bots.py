"""Bots and their versions: ``name@version`` names one body of code for ever."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from referee.storage.base import AreaRepository
from referee.storage.enums import SourceKind
from referee.storage.errors import ConflictError, NotFoundError
from referee.storage.models import Bot, BotVersion
from referee.storage.names import check_bot_name, check_version
from referee.storage.players import find_player


@dataclass(frozen=True, slots=True)
class BotVersionInfo:
    id: int
    bot_id: int
    bot_name: str
    version: str
    source_kind: SourceKind
    location: str
    content_hash: str | None
    owner_id: int | None
    created_at: datetime

    @property
    def label(self) -> str:
        """``name@version``, how tables and logs show a bot version."""
        return f"{self.bot_name}@{self.version}"


class BotRepository(AreaRepository):
    """Bots and their registered versions."""

    def add_bot_version(
        self,
        bot_name: str,
        version: str,
        *,
        source_kind: SourceKind,
        location: str,
        content_hash: str | None = None,
        owner: str | int | None = None,
    ) -> BotVersionInfo:
        """Register ``bot_name@version`` (creating the bot on first use).

        Registering the same version again with the same source and content hash returns the
        stored one; with a different body it raises :class:`ConflictError` (a version string
        names one body of code for ever, or ratings would mix two bots).
        """
        kind = SourceKind(source_kind)
        try:
            with self.db.write() as s:
                owner_id = find_player(s, owner).id if owner is not None else None
                bot = _bot_for(s, bot_name, owner_id)
                existing = s.scalars(
                    select(BotVersion).where(
                        BotVersion.bot_id == bot.id, BotVersion.version == version
                    )
                ).one_or_none()
                if existing is not None:
                    same = (existing.source_kind, existing.location, existing.content_hash) == (
                        kind.value,
                        location,
                        content_hash,
                    )
                    if not same:
                        raise ConflictError(
                            f"{bot_name}@{version} is already registered with other code; "
                            "register a new version instead"
                        )
                    return version_info(existing, bot)
                row = BotVersion(
                    bot_id=bot.id,
                    version=check_version(version),
                    source_kind=kind.value,
                    location=location,
                    content_hash=content_hash,
                )
                s.add(row)
                s.flush()
                return version_info(row, bot)
        except IntegrityError as exc:
            raise ConflictError(f"{bot_name}@{version} was registered concurrently") from exc

    def get_bot_version(self, bot_version_id: int) -> BotVersionInfo:
        with self.db.read() as s:
            row = s.get(BotVersion, bot_version_id, options=[selectinload(BotVersion.bot)])
            if row is None:
                raise NotFoundError(f"no bot version {bot_version_id}")
            return version_info(row, row.bot)

    def find_bot_version(self, bot_name: str, version: str | None = None) -> BotVersionInfo:
        """``bot_name@version``, or the bot's newest version when ``version`` is ``None``."""
        with self.db.read() as s:
            query = (
                select(BotVersion)
                .join(Bot)
                .where(Bot.name == bot_name)
                .options(selectinload(BotVersion.bot))
            )
            if version is not None:
                query = query.where(BotVersion.version == version)
            row = s.scalars(query.order_by(BotVersion.id.desc()).limit(1)).one_or_none()
            if row is None:
                shown = bot_name if version is None else f"{bot_name}@{version}"
                raise NotFoundError(f"no bot {shown}")
            return version_info(row, row.bot)

    def list_bot_versions(self, bot_name: str | None = None) -> list[BotVersionInfo]:
        with self.db.read() as s:
            query = select(BotVersion).join(Bot).options(selectinload(BotVersion.bot))
            if bot_name is not None:
                query = query.where(Bot.name == bot_name)
            rows = s.scalars(query.order_by(Bot.name, BotVersion.id))
            return [version_info(r, r.bot) for r in rows]


def _bot_for(s: Session, bot_name: str, owner_id: int | None) -> Bot:
    """The bot named ``bot_name`` (created on first use), checked against ``owner_id``: a bot
    with an owner stays that player's; an ownerless one is claimed by the first owner given."""
    bot = s.scalars(select(Bot).where(Bot.name == bot_name)).one_or_none()
    if bot is None:
        bot = Bot(name=check_bot_name(bot_name), owner_id=owner_id)
        s.add(bot)
        s.flush()
    elif owner_id is not None and bot.owner_id not in (None, owner_id):
        raise ConflictError(f"bot {bot_name!r} belongs to another player")
    elif owner_id is not None:
        bot.owner_id = owner_id
    return bot


def version_info(row: BotVersion, bot: Bot) -> BotVersionInfo:
    return BotVersionInfo(
        id=row.id,
        bot_id=bot.id,
        bot_name=bot.name,
        version=row.version,
        source_kind=SourceKind(row.source_kind),
        location=row.location,
        content_hash=row.content_hash,
        owner_id=bot.owner_id,
        created_at=row.created_at,
    )
