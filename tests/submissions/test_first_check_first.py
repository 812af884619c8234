"""First checks come first: a first check never waits behind a full validation, and the
bots of full validation games and ladder games are launched at a lower CPU priority than a
first check's (referee/sandbox/priority.py). The games are stand-ins recording the niceness a
bot launched in them would get; no bot runs."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hostile import GOOD_SDK_BOT, zip_of

from engine.registry import load_game
from referee.hosting import autoplay
from referee.match.clock import TimeControl
from referee.sandbox import priority
from referee.storage import Repository
from referee.storage.enums import SubmissionStatus
from referee.submissions import service as service_module
from referee.submissions.offload import FIRST_STEP, FULL_STEP
from referee.submissions.service import FIRST_PASSED, Submissions
from referee.submissions.store import SubmissionStore
from referee.submissions.validate import ValidationResult, ValidationSettings
from referee.workers import ladderjob
from referee.workers.job import WorkerState
from referee.workers.validationjob import play_validation_job, validation_job_kwargs

BACKGROUND = min(priority.MAX_NICE, priority.own_niceness() + priority.BACKGROUND_NICE)


class _Games:
    """Stand-ins for the validation games: each notes the niceness its bots would be
    launched at; the full games wait for :attr:`release`."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.full_started = asyncio.Event()
        self.niceness: dict[str, list[int | None]] = {"first": [], "full": []}

    async def first(self, target: Any, settings: Any) -> ValidationResult:
        self.niceness["first"].append(priority.launch_niceness())
        return ValidationResult(True, "first check passed (stand-in)")

    async def full(self, target: Any, settings: Any) -> ValidationResult:
        self.niceness["full"].append(priority.launch_niceness())
        self.full_started.set()
        await self.release.wait()
        return ValidationResult(True, "every validation game ended without a fault")


def test_a_first_check_never_waits_behind_a_full_validation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the only full-validation slot held by ann's running full games, bob's upload
    still gets its first check's verdict (passed) before those games end; the first check's
    bots would run at the referee's own niceness, the full games' 10 lower."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    for name in ("ann", "bob"):
        repo.create_player(name)
    service = Submissions(repo, SubmissionStore(tmp_path / "store"), concurrency=1)

    async def main() -> tuple[_Games, Any, bool]:
        games = _Games()
        monkeypatch.setattr(service_module, "play_first_check", games.first)
        monkeypatch.setattr(service_module, "play_validation", games.full)
        ann = await service.receive("ann", zip_of({"bot.py": GOOD_SDK_BOT + "\n# ann\n"}))
        _, ann_full = await service.check_and_queue(ann)
        assert ann_full is not None
        await asyncio.wait_for(games.full_started.wait(), timeout=60)
        bob = await service.receive("bob", zip_of({"bot.py": GOOD_SDK_BOT + "\n# bob\n"}))
        bob_checked, bob_full = await asyncio.wait_for(service.check_and_queue(bob), 60)
        ann_still_running = not ann_full.done()
        games.release.set()
        await asyncio.wait_for(asyncio.gather(ann_full, *([bob_full] if bob_full else [])), 60)
        return games, bob_checked, ann_still_running

    try:
        games, bob_checked, ann_still_running = asyncio.run(main())
    finally:
        repo.close()
    assert ann_still_running
    assert bob_checked.status is SubmissionStatus.VALIDATING
    assert bob_checked.reason.startswith(FIRST_PASSED)
    assert games.niceness["first"] == [None, None]  # inherited: the referee's own
    assert games.niceness["full"] == [BACKGROUND, BACKGROUND]


@dataclass(frozen=True)
class _Version:
    label: str


def test_the_ladders_bots_run_below_a_first_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ladder game the server plays launches its bots 10 above the referee's niceness."""
    seen: list[int | None] = []

    async def play_and_store(*args: Any, **kwargs: Any) -> None:
        seen.append(priority.launch_niceness())

    async def refresh_ladder(game: str) -> None:
        pass

    monkeypatch.setattr(autoplay, "play_and_store", play_and_store)
    repo = Repository.open(str(tmp_path / "arena.db"))
    settings = autoplay.AutoplaySettings(load_game("tetress"), TimeControl(), 256, no_sandbox=True)
    recorder: Any = SimpleNamespace(refresh_ladder=refresh_ladder)
    ladder = autoplay.SubmittedLadder(repo, settings, recorder)
    seats: Any = (_Version("a/1"), _Version("b/1"))
    try:
        asyncio.run(ladder._play(seats))
    finally:
        repo.close()
    assert seen == [BACKGROUND]


@pytest.mark.parametrize(("event", "expected"), [("ladder", BACKGROUND), ("grade", None)])
def test_a_workers_ladder_job_runs_lower_than_grading(
    monkeypatch: pytest.MonkeyPatch, event: str, expected: int | None
) -> None:
    """On a worker, a ladder job's bots run 10 above the worker's niceness; a grading job's
    (the instructor's, event 'grade') at the worker's own."""
    seen: list[int | None] = []

    async def play_and_store(*args: Any, **kwargs: Any) -> Any:
        seen.append(priority.launch_niceness())
        return SimpleNamespace(summary=SimpleNamespace(verdict="normal", result="1-0"))

    seats = [_Version("a/1"), _Version("b/1")]
    monkeypatch.setattr(ladderjob, "play_and_store", play_and_store)
    monkeypatch.setattr(ladderjob, "_player", lambda state, kwargs: (None, seats))
    state: Any = SimpleNamespace(publisher=None, repo=None)
    stored = asyncio.run(ladderjob._play(state, 1, None, "uid-1", {"event": event}))
    assert stored and seen == [expected]


def test_a_workers_validation_jobs_run_full_games_below_first_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a worker, a first-check job's bots would run at the worker's own niceness and a
    full-validation job's 10 above it, as on the server (the results' recording is a
    stand-in: it needs a real job's lease)."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    repo.create_player("ann")
    store = SubmissionStore(tmp_path / "store")
    service = Submissions(repo, store)

    async def recorded(self: Submissions, info: Any, *args: Any) -> Any:
        return info

    async def main() -> _Games:
        games = _Games()
        games.release.set()
        monkeypatch.setattr(service_module, "play_first_check", games.first)
        monkeypatch.setattr(service_module, "play_validation", games.full)
        monkeypatch.setattr(Submissions, "settle_first", recorded)
        monkeypatch.setattr(Submissions, "record", recorded)
        ann = await service.receive("ann", zip_of({"bot.py": GOOD_SDK_BOT}))
        state = WorkerState(repo, no_sandbox=True, allow_unsandboxed_uploads=True)
        settings = ValidationSettings(no_sandbox=True)
        for job_id, step in enumerate((FIRST_STEP, FULL_STEP), start=1):
            kwargs = validation_job_kwargs(ann.id, step, str(store.root), settings)
            assert await play_validation_job(state, job_id, None, 0, kwargs) == "recorded"
        return games

    try:
        games = asyncio.run(main())
    finally:
        repo.close()
    assert games.niceness["first"] == [None]  # inherited: the worker's own
    assert games.niceness["full"] == [BACKGROUND]
