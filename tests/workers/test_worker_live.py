"""Live moves across machines: the web front's SSE stream of a server follows a game that a
``referee worker`` process plays, through PostgreSQL LISTEN/NOTIFY."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from workers_helpers import GREEDY, RANDOM, log_lines, make_tournament, start_worker, stop_workers

from referee.asgi.server import WebServer
from referee.live.hub import LiveHub
from referee.storage import Repository
from referee.tournament.runner import TournamentRunner
from referee.web.app import create_app
from referee.workers.dispatch import QueueDispatcher
from referee.workers.live import LiveListener

pytestmark = pytest.mark.slow


async def _events(response: httpx.Response) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    event = ""
    async for line in response.aiter_lines():
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            yield event, json.loads(line[6:])


async def _spectate(web: WebServer, hub: LiveHub) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of the first game the hub shows live, start to end."""
    while not hub.running():
        await asyncio.sleep(0.02)
    uid = hub.running()[0].uid
    async with (
        httpx.AsyncClient(base_url=web.url, timeout=60) as client,
        client.stream("GET", f"/live/{uid}/events") as response,
    ):
        return [(kind, {**data, "uid": uid}) async for kind, data in _events(response)]


async def _run(repo: Repository, url: str) -> list[tuple[str, dict[str, Any]]]:
    hub = LiveHub()
    listener = LiveListener(url, hub)
    listening = asyncio.create_task(listener.run())
    web = WebServer(create_app(repo, hub), "127.0.0.1", 0)
    await web.start()
    try:
        await asyncio.wait_for(listener.listening.wait(), 30)
        spectator = asyncio.create_task(_spectate(web, hub))
        async with QueueDispatcher(repo, url) as queue:
            await TournamentRunner(repo, "live", queue=queue, ladder=None).run()
        return await asyncio.wait_for(spectator, 30)
    finally:
        await web.stop()
        listening.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listening


def test_the_web_front_follows_a_game_played_on_a_worker(pg_url: str, tmp_path: Path) -> None:
    """A spectator of the server's web front gets the start, every move and the end of a game
    the worker plays; the moves are the stored game's and the worker logged that game id."""
    repo = Repository.open(pg_url)
    make_tournament(repo, "live", [RANDOM, GREEDY], turn_limit=16)
    worker = start_worker(pg_url, tmp_path / "w1.log")
    try:
        events = asyncio.run(asyncio.wait_for(_run(repo, pg_url), 150))
    finally:
        stop_workers([worker])
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "start" and kinds[-1] == "end" and set(kinds[1:-1]) <= {"move"}
    uid = events[0][1]["uid"]
    seen = [m["move"] for m in events[0][1]["moves"]] + [
        d["move"] for k, d in events if k == "move"
    ]
    detail = repo.get_game(uid)
    assert seen == [m["move"] for m in detail.moves] and len(seen) == detail.summary.plies > 0
    assert events[-1][1]["result"] == detail.summary.result
    played = {line["game_id"] for line in log_lines(tmp_path / "w1.log")}
    assert uid in played
    repo.close()
