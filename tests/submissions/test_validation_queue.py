"""The live validation queue applies the fair rule: a replaced version gets its own verdict at
once, a team's second version waits for its first to end, and places follow the order."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta

from referee.storage.enums import SubmissionStatus
from referee.storage.submissions import SubmissionInfo
from referee.submissions.validation_queue import ValidationQueue

_T0 = datetime(2026, 6, 1, tzinfo=UTC)


def _info(sid: int, team: str, at_s: float) -> SubmissionInfo:
    return SubmissionInfo(
        id=sid,
        bot_name=f"{team}-bot",
        version=f"v{sid}",
        bot_version_id=sid,
        owner=team,
        digest=f"{sid:064x}",
        location="/nowhere",
        archive_bytes=1,
        unpacked_bytes=1,
        files=1,
        uploaded_at=_T0 + timedelta(seconds=at_s),
        status=SubmissionStatus.VALIDATING,
        reason="",
        output="",
        validation_game_uid=None,
        sandbox="",
        validated_at=None,
    )


def test_the_queue_serves_fairly_and_replaces_waiting_versions() -> None:
    """Alice's first version runs; her second and third wait (the third replaces the second,
    whose verdict comes at once); Bob, who uploaded before her third, is served before it."""
    started: list[int] = []
    release: dict[int, asyncio.Event] = {}

    async def run(info: SubmissionInfo) -> SubmissionInfo:
        started.append(info.id)
        release[info.id] = asyncio.Event()
        await release[info.id].wait()
        return dataclasses.replace(info, status=SubmissionStatus.ACCEPTED)

    async def supersede(info: SubmissionInfo, newer: SubmissionInfo) -> SubmissionInfo:
        return dataclasses.replace(info, status=SubmissionStatus.REJECTED, reason=newer.label)

    async def until(condition: object) -> None:
        while not callable(condition) or not condition():
            await asyncio.sleep(0)

    async def main() -> None:
        queue = ValidationQueue(run, supersede, slots=2)
        a1 = queue.put(_info(1, "alice", 0))
        await until(lambda: started == [1])
        a2 = queue.put(_info(2, "alice", 1))
        b1 = queue.put(_info(3, "bob", 2))
        await until(lambda: started == [1, 3])
        a3 = queue.put(_info(4, "alice", 3))
        replaced = await a2
        assert replaced.status is SubmissionStatus.REJECTED and replaced.reason == "alice-bot@v4"
        assert [(r.team, r.state, r.place) for r in queue.rows()] == [
            ("alice", "running", 0),
            ("bob", "running", 0),
            ("alice", "waiting", 1),
        ]
        assert queue.position(4)[0] == 1 and queue.position(4)[1] is None  # nothing measured
        release[3].set()
        assert (await b1).status is SubmissionStatus.ACCEPTED
        assert started == [1, 3]  # alice's third waits for her first, though a slot is free
        release[1].set()
        await a1
        await until(lambda: started == [1, 3, 4])
        assert queue.position(4) == (0, 0.0)
        release[4].set()
        assert (await a3).status is SubmissionStatus.ACCEPTED
        await queue.drain()
        assert queue.rows() == [] and len(queue.durations) == 3

    asyncio.run(asyncio.wait_for(main(), 60))
