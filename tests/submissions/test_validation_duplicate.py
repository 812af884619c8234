"""A validation whose version was judged by another attempt while it ran (a worker's job left
by an earlier server run) keeps the first verdict and says so as a clean duplicate, never as a
crash of the queue."""

from __future__ import annotations

import asyncio
from pathlib import Path

import structlog
from hostile import GOOD_SDK_BOT, zip_of

from referee.storage import Repository
from referee.storage import submissions as rows
from referee.storage.enums import SubmissionStatus
from referee.storage.submissions import SubmissionInfo
from referee.submissions.service import Submissions
from referee.submissions.store import SubmissionStore
from referee.submissions.validate import ValidationResult


class _Overtaken(Submissions):
    """Full games whose verdict another attempt records first (what a leftover job would)."""

    async def judge_full(self, info: SubmissionInfo) -> ValidationResult:
        await asyncio.to_thread(
            rows.finish_validation, self.repo.db, info.id, accepted=True, reason="the other"
        )
        return ValidationResult(False, "this attempt's verdict")


def test_a_duplicate_verdict_is_refused_and_logged_as_such(tmp_path: Path, info_logs: None) -> None:
    """The fair queue's validation of a version another attempt judged meanwhile: the first
    verdict stays, the queue's future gets it, and the log says validation_duplicate_refused
    (info), not validation_crashed."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    repo.create_player("bob")
    service = _Overtaken(repo, SubmissionStore(tmp_path / "store"))

    async def main() -> tuple[SubmissionInfo, list[dict[str, object]]]:
        info = await service.receive("bob", zip_of({"bot.py": GOOD_SDK_BOT}))
        with structlog.testing.capture_logs() as logs:
            done = await asyncio.wait_for(service.queue.put(info), timeout=60)
            await service.queue.drain()
        return done, logs

    try:
        done, logs = asyncio.run(main())
        stored = rows.submission_by_id(repo.db, done.id)
    finally:
        repo.close()
    assert (done.status, done.reason) == (SubmissionStatus.ACCEPTED, "the other")
    assert (stored.status, stored.reason) == (SubmissionStatus.ACCEPTED, "the other")
    events = [(e["event"], e["log_level"]) for e in logs]
    assert ("validation_duplicate_refused", "info") in events
    assert not any(event == "validation_crashed" for event, _ in events)
