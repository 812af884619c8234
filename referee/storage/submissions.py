"""Uploaded bot versions in the database: who sent what, how validation went, which plays.

Each function is one transaction on a :class:`~referee.storage.db.Database` and returns frozen
dataclasses. A submission is a row in ``submissions`` tied one-to-one to the bot version it
created (``bot_versions``; its ``location`` is the code's folder in the submission store, named
by the content hash). See docs/submissions.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from referee.storage.db import Database
from referee.storage.enums import SourceKind, SubmissionStatus
from referee.storage.errors import ConflictError, NotFoundError
from referee.storage.models import (
    Bot,
    BotVersion,
    Player,
    Submission,
    Tournament,
    TournamentEntry,
    utcnow,
)
from referee.storage.names import check_bot_name


class AlreadyJudged(ConflictError):
    """A second verdict for a version already accepted or rejected: the first one stands."""


@dataclass(frozen=True, slots=True)
class SubmissionInfo:
    """One uploaded version and its validation (``output``: the bot's own captured output)."""

    id: int
    bot_name: str
    version: str
    bot_version_id: int
    owner: str
    digest: str
    location: str
    archive_bytes: int
    unpacked_bytes: int
    files: int
    uploaded_at: datetime
    status: SubmissionStatus
    reason: str
    output: str
    validation_game_uid: str | None
    sandbox: str
    validated_at: datetime | None

    @property
    def label(self) -> str:
        return f"{self.bot_name}@{self.version}"


@dataclass(frozen=True, slots=True)
class NewVersion:
    """What :func:`record_submission` stores for one upload."""

    owner: str
    bot_name: str
    version: str
    digest: str
    source_kind: SourceKind
    location: str
    archive_bytes: int
    unpacked_bytes: int
    files: int


def record_submission(db: Database, new: NewVersion) -> tuple[SubmissionInfo, bool]:
    """Store ``new`` (bot, version and submission row at once); ``(info, created)``.

    Uploading the same code to the same bot again returns the stored version unchanged
    (``created`` false). A bot name that belongs to someone else, or to nobody (registered by
    the instructor), is refused with :class:`ConflictError`.
    """
    try:
        with db.write() as s:
            owner = _player(s, new.owner)
            bot = s.scalars(select(Bot).where(Bot.name == new.bot_name)).one_or_none()
            if bot is None:
                bot = Bot(name=check_bot_name(new.bot_name), owner_id=owner.id)
                s.add(bot)
                s.flush()
            elif bot.owner_id != owner.id:
                raise ConflictError(
                    f"the bot name {new.bot_name!r} is taken by another player or the "
                    "instructor: choose another with --name"
                )
            existing = s.scalars(
                select(BotVersion).where(
                    BotVersion.bot_id == bot.id, BotVersion.version == new.version
                )
            ).one_or_none()
            if existing is not None:
                row = s.scalars(
                    select(Submission).where(Submission.bot_version_id == existing.id)
                ).one_or_none()
                if row is None or existing.content_hash != f"sha256:{new.digest}":
                    raise ConflictError(f"{new.bot_name}@{new.version} exists with other code")
                return _info(row, existing, bot, owner), False
            version = BotVersion(
                bot_id=bot.id,
                version=new.version,
                source_kind=new.source_kind.value,
                location=new.location,
                content_hash=f"sha256:{new.digest}",
            )
            s.add(version)
            s.flush()
            row = Submission(
                bot_version_id=version.id,
                owner_id=owner.id,
                digest=new.digest,
                archive_bytes=new.archive_bytes,
                unpacked_bytes=new.unpacked_bytes,
                files=new.files,
            )
            s.add(row)
            s.flush()
            return _info(row, version, bot, owner), True
    except IntegrityError as exc:
        raise ConflictError(f"{new.bot_name}@{new.version} was uploaded concurrently") from exc


def finish_validation(
    db: Database,
    submission_id: int,
    *,
    accepted: bool,
    reason: str,
    output: str = "",
    game_uid: str | None = None,
    sandbox: str = "",
    once: bool = False,
    guard: Callable[[Session], None] | None = None,
) -> SubmissionInfo:
    """Record a validation's verdict; only an accepted version is ever chosen to play.

    ``once``: refuse (:class:`AlreadyJudged`) a version no longer ``validating``, so a late
    duplicate result never replaces the verdict; ``guard`` runs in the same transaction and
    raises to refuse (a worker's lease, :mod:`referee.workers.job`)."""
    with db.write() as s:
        if guard is not None:
            guard(s)
        row = s.get(Submission, submission_id, with_for_update=once)
        if row is None:
            raise NotFoundError(f"no submission {submission_id}")
        if once and row.status != SubmissionStatus.VALIDATING.value:
            raise AlreadyJudged(f"submission {submission_id} is already {row.status}")
        row.status = (SubmissionStatus.ACCEPTED if accepted else SubmissionStatus.REJECTED).value
        row.reason = reason
        row.output = output
        row.validation_game_uid = game_uid
        row.sandbox = sandbox[:200]
        row.validated_at = utcnow()
        s.flush()
        return _load(s, row)


def note_progress(
    db: Database,
    submission_id: int,
    reason: str,
    guard: Callable[[Session], None] | None = None,
) -> SubmissionInfo:
    """Say where a version still ``validating`` stands (its first check passed, its full
    games queued or running); a version already judged is left as it is. ``guard``: as for
    :func:`finish_validation`."""
    with db.write() as s:
        if guard is not None:
            guard(s)
        row = s.get(Submission, submission_id)
        if row is None:
            raise NotFoundError(f"no submission {submission_id}")
        if row.status == SubmissionStatus.VALIDATING.value:
            row.reason = reason
            s.flush()
        return _load(s, row)


def list_submissions(
    db: Database, *, owner: str | None = None, bot_name: str | None = None
) -> list[SubmissionInfo]:
    """Every submission (oldest first), or one player's or one bot's."""
    with db.read() as s:
        query = (
            select(Submission, BotVersion, Bot, Player)
            .join(BotVersion, Submission.bot_version_id == BotVersion.id)
            .join(Bot, BotVersion.bot_id == Bot.id)
            .join(Player, Submission.owner_id == Player.id)
        )
        if owner is not None:
            query = query.where(Player.name == owner)
        if bot_name is not None:
            query = query.where(Bot.name == bot_name)
        rows = s.execute(query.order_by(Submission.uploaded_at, Submission.id)).all()
        return [_info(*row) for row in rows]


def get_submission(db: Database, bot_name: str, version: str | None = None) -> SubmissionInfo:
    """``bot_name@version``, or the bot's newest submission."""
    found = list_submissions(db, bot_name=bot_name)
    if version is not None:
        found = [f for f in found if f.version == version]
    if not found:
        raise NotFoundError(f"no submitted bot {bot_name}{'@' + version if version else ''}")
    return found[-1]


def submission_by_id(db: Database, submission_id: int) -> SubmissionInfo:
    """The submission ``submission_id`` (:class:`NotFoundError` if none)."""
    with db.read() as s:
        row = s.get(Submission, submission_id)
        if row is None:
            raise NotFoundError(f"no submission {submission_id}")
        return _load(s, row)


def submission_of_version(db: Database, bot_version_id: int) -> SubmissionInfo | None:
    with db.read() as s:
        row = s.scalars(
            select(Submission).where(Submission.bot_version_id == bot_version_id)
        ).one_or_none()
        return _load(s, row) if row is not None else None


@dataclass(frozen=True, slots=True)
class Usage:
    """What one player has used of their quotas."""

    submissions_since: int
    stored_bytes: int


def usage(db: Database, player: str, since: datetime) -> Usage:
    """Submissions by ``player`` uploaded after ``since``, and their stored bytes in all."""
    with db.read() as s:
        owner = _player(s, player)
        recent = s.scalar(
            select(func.count(Submission.id)).where(
                Submission.owner_id == owner.id, Submission.uploaded_at > since
            )
        )
        stored = s.scalar(
            select(func.coalesce(func.sum(Submission.unpacked_bytes), 0)).where(
                Submission.owner_id == owner.id
            )
        )
        return Usage(int(recent or 0), int(stored or 0))


def playing_version(db: Database, bot_id: int, before: datetime | None = None) -> int | None:
    """The id of the bot's latest accepted version (uploaded before ``before`` if given)."""
    with db.read() as s:
        query = (
            select(BotVersion.id)
            .join(Submission, Submission.bot_version_id == BotVersion.id)
            .where(
                BotVersion.bot_id == bot_id,
                Submission.status == SubmissionStatus.ACCEPTED.value,
            )
        )
        if before is not None:
            query = query.where(Submission.uploaded_at <= before)
        found = s.scalars(query.order_by(Submission.uploaded_at.desc(), Submission.id.desc()))
        return found.first()


def set_entries_close(db: Database, tournament_id: int, when: datetime | None) -> None:
    with db.write() as s:
        row = s.get(Tournament, tournament_id)
        if row is None:
            raise NotFoundError(f"no tournament {tournament_id}")
        row.entries_close = when


def entries_close(db: Database, tournament_id: int) -> datetime | None:
    with db.read() as s:
        row = s.get(Tournament, tournament_id)
        if row is None:
            raise NotFoundError(f"no tournament {tournament_id}")
        return row.entries_close


@dataclass(frozen=True, slots=True)
class EntryChange:
    """What freezing did to one entrant: ``new`` is ``None`` when it was withdrawn."""

    bot_name: str
    old: str
    new: str | None


def freeze_entries(db: Database, tournament_id: int, at: datetime) -> list[EntryChange]:
    """Point each submitted entrant at its latest version accepted by ``at``.

    An entrant with no accepted version by then is withdrawn. Entrants that are not
    submissions (registered paths, remote bots) are left alone.
    """
    changes: list[EntryChange] = []
    with db.write() as s:
        entries = s.scalars(
            select(TournamentEntry).where(TournamentEntry.tournament_id == tournament_id)
        ).all()
        for entry in entries:
            version = s.get(BotVersion, entry.bot_version_id)
            assert version is not None
            if not _is_submitted_bot(s, version.bot_id):
                continue
            bot = s.get(Bot, version.bot_id)
            assert bot is not None
            pick = s.scalars(
                select(BotVersion)
                .join(Submission, Submission.bot_version_id == BotVersion.id)
                .where(
                    BotVersion.bot_id == version.bot_id,
                    Submission.status == SubmissionStatus.ACCEPTED.value,
                    Submission.uploaded_at <= at,
                )
                .order_by(Submission.uploaded_at.desc(), Submission.id.desc())
            ).first()
            if pick is None:
                s.delete(entry)
                changes.append(EntryChange(bot.name, version.version, None))
            elif pick.id != version.id:
                entry.bot_version_id = pick.id
                changes.append(EntryChange(bot.name, version.version, pick.version))
    return changes


def _is_submitted_bot(s: Session, bot_id: int) -> bool:
    found = s.scalar(
        select(func.count(Submission.id))
        .join(BotVersion, Submission.bot_version_id == BotVersion.id)
        .where(BotVersion.bot_id == bot_id)
    )
    return bool(found)


def _player(s: Session, name: str) -> Player:
    row = s.scalars(select(Player).where(Player.name == name)).one_or_none()
    if row is None:
        raise NotFoundError(f"no player {name!r}")
    return row


def _load(s: Session, row: Submission) -> SubmissionInfo:
    version = s.get(BotVersion, row.bot_version_id)
    assert version is not None
    bot = s.get(Bot, version.bot_id)
    owner = s.get(Player, row.owner_id)
    assert bot is not None and owner is not None
    return _info(row, version, bot, owner)


def _info(row: Submission, version: BotVersion, bot: Bot, owner: Player) -> SubmissionInfo:
    return SubmissionInfo(
        id=row.id,
        bot_name=bot.name,
        version=version.version,
        bot_version_id=version.id,
        owner=owner.name,
        digest=row.digest,
        location=version.location,
        archive_bytes=row.archive_bytes,
        unpacked_bytes=row.unpacked_bytes,
        files=row.files,
        uploaded_at=row.uploaded_at,
        status=SubmissionStatus(row.status),
        reason=row.reason,
        output=row.output,
        validation_game_uid=row.validation_game_uid,
        sandbox=row.sandbox,
        validated_at=row.validated_at,
    )
