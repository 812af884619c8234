"""Submissions in storage (SQLite and PostgreSQL): versions, verdicts, quotas, frozen entries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from referee.storage import (
    ConflictError,
    Repository,
    SourceKind,
    TournamentFormat,
    TournamentSettings,
)
from referee.storage import submissions as rows
from referee.storage.enums import SubmissionStatus
from referee.storage.models import Submission
from referee.storage.submissions import NewVersion

T0 = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def _new(owner: str, bot: str, digest_char: str, size: int = 1000) -> NewVersion:
    digest = digest_char * 64
    return NewVersion(
        owner=owner,
        bot_name=bot,
        version=digest[:12],
        digest=digest,
        source_kind=SourceKind.PACKAGE,
        location=f"/store/versions/{digest}/agent",
        archive_bytes=size // 2,
        unpacked_bytes=size,
        files=2,
    )


def _upload(repo: Repository, new: NewVersion, at: datetime, accepted: bool | None) -> int:
    info, created = rows.record_submission(repo.db, new)
    assert created
    with repo.db.write() as s:
        s.execute(update(Submission).where(Submission.id == info.id).values(uploaded_at=at))
    if accepted is not None:
        rows.finish_validation(repo.db, info.id, accepted=accepted, reason="r", output="o")
    return info.bot_version_id


def test_a_submission_creates_an_owned_version_once(repo: Repository) -> None:
    """The same code to the same bot twice is one version; the row keeps owner and sizes."""
    repo.create_player("alice")
    info, created = rows.record_submission(repo.db, _new("alice", "alice-bot", "a"))
    again, created_again = rows.record_submission(repo.db, _new("alice", "alice-bot", "a"))
    assert created and not created_again and again.id == info.id
    assert (info.owner, info.status, info.unpacked_bytes) == ("alice", "validating", 1000)
    version = repo.get_bot_version(info.bot_version_id)
    assert version.content_hash == "sha256:" + "a" * 64 and version.owner_id is not None


def test_bot_names_of_others_and_of_the_instructor_are_refused(repo: Repository) -> None:
    """A student cannot add versions to another player's bot, nor to an unowned one."""
    repo.create_player("alice")
    repo.create_player("mallory")
    rows.record_submission(repo.db, _new("alice", "alice-bot", "a"))
    repo.add_bot_version("house", "1", source_kind=SourceKind.SDK_MODULE, location="x.y")
    with pytest.raises(ConflictError, match="taken"):
        rows.record_submission(repo.db, _new("mallory", "alice-bot", "b"))
    with pytest.raises(ConflictError, match="taken"):
        rows.record_submission(repo.db, _new("mallory", "house", "b"))
    assert [s.owner for s in rows.list_submissions(repo.db)] == ["alice"]


def test_validation_verdict_and_listing_per_owner(repo: Repository) -> None:
    """A verdict is stored with its sentence and output; a player lists only their own."""
    for name in ("alice", "bob"):
        repo.create_player(name)
    a, _ = rows.record_submission(repo.db, _new("alice", "alice-bot", "a"))
    rows.record_submission(repo.db, _new("bob", "bob-bot", "b"))
    done = rows.finish_validation(
        repo.db, a.id, accepted=False, reason="crashed", output="Traceback", sandbox="bwrap"
    )
    assert (done.status, done.reason, done.output, done.sandbox) == (
        SubmissionStatus.REJECTED,
        "crashed",
        "Traceback",
        "bwrap",
    )
    assert done.validated_at is not None
    assert [s.bot_name for s in rows.list_submissions(repo.db, owner="alice")] == ["alice-bot"]


def test_usage_counts_recent_uploads_and_all_stored_bytes(repo: Repository) -> None:
    """Quota figures: uploads after a moment, and stored bytes of every version."""
    repo.create_player("alice")
    _upload(repo, _new("alice", "alice-bot", "a", 300), T0, None)
    _upload(repo, _new("alice", "alice-bot", "b", 700), T0 + timedelta(hours=2), None)
    used = rows.usage(repo.db, "alice", T0 + timedelta(hours=1))
    assert (used.submissions_since, used.stored_bytes) == (1, 1000)


def test_latest_accepted_version_plays_and_entries_freeze_at_the_deadline(
    repo: Repository,
) -> None:
    """Latest accepted plays; a frozen tournament takes the latest accepted before its close,
    and withdraws a bot that had none."""
    for name in ("alice", "bob"):
        repo.create_player(name)
    v1 = _upload(repo, _new("alice", "alice-bot", "1"), T0, True)
    v2 = _upload(repo, _new("alice", "alice-bot", "2"), T0 + timedelta(hours=1), False)
    v3 = _upload(repo, _new("alice", "alice-bot", "3"), T0 + timedelta(hours=3), True)
    b1 = _upload(repo, _new("bob", "bob-bot", "4"), T0 + timedelta(hours=4), True)
    bot_id = repo.get_bot_version(v1).bot_id
    assert rows.playing_version(repo.db, bot_id) == v3
    assert rows.playing_version(repo.db, bot_id, before=T0 + timedelta(hours=2)) == v1
    house = repo.add_bot_version("house", "1", source_kind=SourceKind.SDK_MODULE, location="m")
    settings = TournamentSettings(name="cup", format=TournamentFormat.ROUND_ROBIN, game="tetress")
    t = repo.create_tournament(settings, [v3, b1, house.id])
    close = T0 + timedelta(hours=2)
    rows.set_entries_close(repo.db, t.id, close)
    assert rows.entries_close(repo.db, t.id) == close
    changes = rows.freeze_entries(repo.db, t.id, close)
    assert {(c.bot_name, c.new) for c in changes} == {
        ("alice-bot", "1" * 12),
        ("bob-bot", None),
    }
    assert sorted(v.id for v in repo.tournament_entrants(t.id)) == sorted([v1, house.id])
    assert v2 not in [v.id for v in repo.tournament_entrants(t.id)]
