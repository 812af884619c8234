"""A validating version's place in the fair queue and its wait estimate are data: in the
Submissions service's reply (``SubmissionView.queue_state``, ``queue_place``,
``wait_estimate_s``), printed by the SDK's ``mine``, and on the web's upload table."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from test_validation_queue import _info
from upload_harness import cli, mine, upload_server

from client_sdk._mine import queue_line
from client_sdk.proto import submissions_pb2 as spb
from referee.rpc.myviews import _version_view
from referee.storage.submissions import SubmissionInfo
from referee.submissions.validation_queue import Position, ValidationQueue


def blocked_queue() -> tuple[ValidationQueue, asyncio.Event]:
    """A queue whose validations run until the event is set (one slot)."""
    release = asyncio.Event()

    async def run(info: SubmissionInfo) -> SubmissionInfo:
        await release.wait()
        return info

    async def supersede(info: SubmissionInfo, newer: SubmissionInfo) -> SubmissionInfo:
        return info

    return ValidationQueue(run, supersede, slots=1), release


def test_positions_are_read_from_the_queue_and_put_in_the_view() -> None:
    """The running version says so, the waiting ones have their place (and an estimate once
    a validation was measured); the view carries them only for a validating version."""

    async def main() -> None:
        queue, release = blocked_queue()
        queue.durations.append(30.0)
        futures = [queue.put(_info(i, team, i)) for i, team in enumerate(("ann", "bob", "cy"), 1)]
        await asyncio.sleep(0)
        snap = queue.snapshot()
        assert snap == {
            1: Position("running"),
            2: Position("waiting", 1, 15.0),
            3: Position("waiting", 2, 45.0),
        }
        assert queue.where(42) == Position("")
        view = _version_view(_info(3, "cy", 3), False, snap.__getitem__)
        assert (view.queue_state, view.queue_place, view.wait_estimate_s) == ("waiting", 2, 45.0)
        assert queue_line(view) == "full validation games: place 2 in the queue, about 45 s"
        running = _version_view(_info(1, "ann", 1), False, snap.__getitem__)
        assert queue_line(running) == "full validation games: running now"
        assert not running.HasField("wait_estimate_s")
        release.set()
        await asyncio.gather(*futures)

    asyncio.run(main())


def test_a_view_without_queue_fields_prints_nothing() -> None:
    """An older server's reply (no queue fields) adds no line; no estimate yet is said."""
    assert queue_line(spb.SubmissionView(status="validating")) == ""
    waiting = spb.SubmissionView(status="validating", queue_state="waiting", queue_place=3)
    assert queue_line(waiting) == "full validation games: place 3 in the queue (no estimate yet)"


@pytest.mark.slow
def test_mine_shows_the_place_and_the_estimate(tmp_path: Path) -> None:
    """Over gRPC and through ``python -m client_sdk mine``: a version waiting behind another
    team's has place 1 and the estimate from the measured validations, as fields."""

    async def main() -> tuple[spb.ListMineResponse, str, dict[str, Any]]:
        async with upload_server(tmp_path, players=("alice", "bob")) as up:
            submissions = up.service.submissions
            queue, release = blocked_queue()
            submissions.queue = queue
            queue.durations.append(20.0)
            bob = await submissions.receive("bob", _zip("bob"))
            alice = await submissions.receive("alice", _zip("alice"))
            futures = [queue.put(bob), queue.put(alice)]
            try:
                reply = await mine(up, up.tokens["alice"])
                login = ["--server", up.address, "--token", up.tokens["alice"]]
                _, text, _ = await cli("mine", "versions", *login)
                _, raw, _ = await cli("mine", "versions", "--json", *login)
            finally:
                release.set()
                await asyncio.gather(*futures)
            return reply, text, json.loads(raw.strip().splitlines()[-1])

    reply, text, data = asyncio.run(main())
    (version,) = reply.versions
    assert (version.queue_state, version.queue_place) == ("waiting", 1)
    assert version.wait_estimate_s == pytest.approx(10.0)
    assert "full validation games: place 1 in the queue, about 10 s" in text, text
    (listed,) = data["versions"]
    assert listed["queue_state"] == "waiting" and listed["queue_place"] == 1
    assert listed["wait_estimate_s"] == pytest.approx(10.0)


def _zip(tag: str) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(
            "bot.py",
            f"# {tag}\nimport random\nfrom client_sdk import Agent\n\n\nclass Bot(Agent):\n"
            "    def choose_move(self, state, clocks):\n"
            "        return random.choice(list(state.legal_moves))\n",
        )
    return buffer.getvalue()
