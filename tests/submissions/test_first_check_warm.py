"""The server keeps warm sandboxes for the first checks' bots while checks come in: asked for
as a check starts (enough for the checks that run at once, with the validation's memory
limit), given up once no check ran for the linger time or at shutdown; a worker's one-job
service never asks. The pool is a stand-in recording what is asked of it, except in the last
test, where a real first check takes real warm sandboxes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hostile import GOOD_SDK_BOT, zip_of

from referee.sandbox import warm
from referee.sandbox.isolation import Isolation
from referee.sandbox.isolation import choose as real_choose
from referee.storage import Repository
from referee.submissions import firstchecks
from referee.submissions.firstchecks import BOTS_PER_CHECK, FIRST_CHECKS_AT_ONCE, FirstCheckSlots
from referee.submissions.service import Submissions
from referee.submissions.store import SubmissionStore
from referee.submissions.validate import ValidationSettings
from tests.sandbox.sandbox_required import require_sandbox


@pytest.fixture(autouse=True)
def _sandbox_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sandbox is taken as found (no probe: these tests start no process)."""
    monkeypatch.setattr(firstchecks, "choose", lambda no_sandbox=False: Isolation.BWRAP)


class _Pool:
    """A stand-in for ``warm.demand``: what was asked, and whether it is still held."""

    def __init__(self) -> None:
        self.asked: list[tuple[int, warm.WarmTerms | None]] = []
        self.held = asyncio.Event()
        self.given_up = asyncio.Event()

    @contextlib.asynccontextmanager
    async def demand(
        self, slots: int, terms: warm.WarmTerms | None = None, isolation: Any = None, **_: Any
    ) -> AsyncIterator[object]:
        self.asked.append((slots, terms))
        self.held.set()
        try:
            yield object()
        finally:
            self.given_up.set()


def test_first_checks_keep_sandboxes_warm_until_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    """A check starting asks for BOTS_PER_CHECK sandboxes per check slot with the
    validation's memory limit; once no check ran for LINGER_S the demand is given up."""
    monkeypatch.setattr(firstchecks, "LINGER_S", 0.05)

    async def main() -> _Pool:
        pool = _Pool()
        monkeypatch.setattr(firstchecks.warm, "demand", pool.demand)
        slots = FirstCheckSlots(ValidationSettings(memory_mb=300.0))
        async with slots.slot("ann/1"):
            await asyncio.wait_for(pool.held.wait(), timeout=60)
            assert not pool.given_up.is_set()  # held while a check runs
        await asyncio.wait_for(pool.given_up.wait(), timeout=60)
        await slots.close()
        return pool

    pool = asyncio.run(main())
    assert pool.asked == [(FIRST_CHECKS_AT_ONCE * BOTS_PER_CHECK, warm.WarmTerms(memory_mb=300.0))]


def test_shutdown_gives_the_warm_sandboxes_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """Closing the slots (the server's shutdown) ends the demand at once, however long the
    linger time."""

    async def main() -> _Pool:
        pool = _Pool()
        monkeypatch.setattr(firstchecks.warm, "demand", pool.demand)
        slots = FirstCheckSlots(ValidationSettings())
        async with slots.slot("ann/1"):
            await asyncio.wait_for(pool.held.wait(), timeout=60)
        await slots.close()
        assert pool.given_up.is_set()
        return pool

    assert len(asyncio.run(main()).asked) == 1


def test_a_workers_service_keeps_nothing_warm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without warm_for (a worker's one-job service, which has its own pool) a check asks
    for no sandbox."""

    async def main() -> _Pool:
        pool = _Pool()
        monkeypatch.setattr(firstchecks.warm, "demand", pool.demand)
        slots = FirstCheckSlots()
        async with slots.slot("ann/1"):
            pass
        await slots.close()
        return pool

    assert asyncio.run(main()).asked == []


@pytest.mark.slow
def test_a_servers_first_checks_take_warm_sandboxes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the server (warm_first_checks), a first check after the first finds its four bots'
    sandboxes started and takes them (the pool counts the hits); the version passes, and at
    shutdown the pool is empty."""
    require_sandbox()
    monkeypatch.setattr(firstchecks, "choose", real_choose)
    repo = Repository.open(str(tmp_path / "arena.db"))
    repo.create_player("ann")
    service = Submissions(repo, SubmissionStore(tmp_path / "store"), warm_first_checks=True)

    async def main() -> tuple[list[bool], int, int]:
        passed = []
        for n in range(2):
            info = await service.receive("ann", zip_of({"bot.py": GOOD_SDK_BOT + f"\n# {n}\n"}))
            if n == 1:
                pool = warm.current_pool()
                assert pool is not None
                await pool.ready(warm.WarmTerms(memory_mb=250.0), count=BOTS_PER_CHECK, timeout=120)
                hits_before = pool.hits
            passed.append((await service.first_check(info))[1])
        hits = pool.hits - hits_before
        await service.close()
        return passed, hits, pool.size

    try:
        passed, hits, size = asyncio.run(main())
    finally:
        repo.close()
    assert passed == [True, True]
    assert hits == BOTS_PER_CHECK
    assert size == 0
