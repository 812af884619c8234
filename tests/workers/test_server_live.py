"""The server's own games live in another process: a web front on a hub and listener of its
own (as ``referee web`` runs) follows, through PostgreSQL LISTEN/NOTIFY, the games the server
plays itself, while the server's own hub (which also listens, for the workers' games) gets
each of its moves once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from workers_helpers import GREEDY, RANDOM, REFEREE, make_tournament

from referee.asgi.server import WebServer
from referee.commands._queued import queue_for
from referee.live.hub import LiveEnd, LiveHub
from referee.storage import NotFoundError, Repository
from referee.tournament.runner import TournamentRunner
from referee.web.app import create_app
from referee.workers.live import CHANNEL, LiveListener
from referee.workers.queue import conninfo

#: The game ids of the marks :func:`_heard` sends.
MARK = "mark-"


class _EndCheckingHub(LiveHub):
    """A hub that notes, as each game ends in it, whether the game's row is written yet."""

    def __init__(self, repo: Repository) -> None:
        super().__init__()
        self.repo = repo
        self.stored_at_end: dict[str, bool] = {}

    def finish(self, uid: str, end: LiveEnd) -> None:
        if uid not in self.stored_at_end:
            try:
                self.repo.get_game(uid)
                self.stored_at_end[uid] = True
            except NotFoundError:
                self.stored_at_end[uid] = False
        super().finish(uid, end)


async def _events(response: httpx.Response) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    event = ""
    async for line in response.aiter_lines():
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            yield event, json.loads(line[6:])


async def _live_uids(client: httpx.AsyncClient) -> list[str]:
    """The games a web front shows live (``/api/live``), but the marks of :func:`_heard`."""
    games = (await client.get("/api/live")).json()
    return [g["uid"] for g in games if not g["uid"].startswith(MARK)]


async def _spectate(web_url: str) -> tuple[str, list[tuple[str, Any]]]:
    """The first game the web front shows live: its id and its SSE events, start to end."""
    async with httpx.AsyncClient(base_url=web_url, timeout=60) as client:
        while not (uids := await _live_uids(client)):
            await asyncio.sleep(0.05)
        async with client.stream("GET", f"/live/{uids[0]}/events") as response:
            return uids[0], [(kind, data) async for kind, data in _events(response)]


async def _heard(url: str, has: Callable[[str], Awaitable[bool]], mark: str) -> None:
    """Send a start of a game named ``mark`` from another session until ``has`` it: the
    listener it asks listens, and (NOTIFYs arrive in commit order) has every event sent
    before."""
    mark = MARK + mark
    payload = json.dumps(
        {
            "kind": "start",
            "uid": mark,
            "game": "tetress",
            "players": ["x", "y"],
            "seat_names": ["RED", "BLUE"],
            "position": "",
        }
    )
    async with await psycopg.AsyncConnection.connect(conninfo(url), autocommit=True) as conn:
        while not await has(mark):
            await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))
            await asyncio.sleep(0.1)


def _in(hub: LiveHub) -> Callable[[str], Awaitable[bool]]:
    async def has(uid: str) -> bool:
        return hub.get(uid) is not None

    return has


async def _run(repo: Repository, url: str) -> tuple[LiveHub, _EndCheckingHub, Any]:
    server_hub = LiveHub()
    web_hub = _EndCheckingHub(repo)
    web_listener = LiveListener(url, web_hub)
    listening = asyncio.create_task(web_listener.run())
    web = WebServer(create_app(repo, web_hub), "127.0.0.1", 0)
    await web.start()
    try:
        await asyncio.wait_for(web_listener.listening.wait(), 30)
        # The server's hub relays and listens as `referee serve` on PostgreSQL does.
        async with queue_for(False, repo, server_hub, lambda _: None):
            await _heard(url, _in(server_hub), "listening")
            spectator = asyncio.create_task(_spectate(web.url))
            await TournamentRunner(repo, "live", hub=server_hub, ladder=None).run()
            spectated = await asyncio.wait_for(spectator, 30)
            await _heard(url, _in(server_hub), "flushed")
        return server_hub, web_hub, spectated
    finally:
        await web.stop()
        listening.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listening


@pytest.mark.slow
def test_a_separate_web_front_follows_the_games_the_server_plays(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A web front in another process's stead gets the start, every move and the end of each
    game the server plays itself, the end only once the row is written; the server's own hub
    has each move once (its own events, echoed back by NOTIFY, are skipped)."""
    repo = Repository.open(pg_url)
    tournament = make_tournament(repo, "live", [RANDOM, GREEDY], turn_limit=16)
    record_game = repo.record_game

    def slow_record(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.5)  # not a wait: holds each row back, so an end sent early would show
        return record_game(*args, **kwargs)

    monkeypatch.setattr(repo, "record_game", slow_record)
    server_hub, web_hub, (uid, events) = asyncio.run(asyncio.wait_for(_run(repo, pg_url), 150))
    games = repo.list_games(tournament_id=tournament.id)
    assert len(games) == 2
    for game in games:
        detail = repo.get_game(game.uid)
        stored = [m["move"] for m in detail.moves]
        for hub in (server_hub, web_hub):
            live = hub.get(game.uid)
            assert live is not None and live.end is not None
            assert [m.action for m in live.moves] == stored
            assert len({m.ply for m in live.moves}) == len(stored) == detail.summary.plies > 0
            assert live.end.result == detail.summary.result
        assert web_hub.stored_at_end[game.uid] is True
    _assert_followed(repo, uid, events)
    repo.close()


def _assert_followed(repo: Repository, uid: str, events: list[tuple[str, Any]]) -> None:
    """``events`` (a game's SSE stream) are its start, every stored move once, its end."""
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "start" and kinds[-1] == "end" and set(kinds[1:-1]) <= {"move"}
    seen = [m["move"] for m in events[0][1]["moves"]] + [
        d["move"] for k, d in events if k == "move"
    ]
    detail = repo.get_game(uid)
    assert seen == [m["move"] for m in detail.moves] and len(seen) == detail.summary.plies > 0
    assert events[-1][1]["result"] == detail.summary.result


async def _run_beside(repo: Repository, url: str, web_url: str) -> tuple[str, list[Any]]:
    """The server's games played here (its hub relaying as `referee serve`'s does), spectated
    on the web front at ``web_url``."""
    async with httpx.AsyncClient(base_url=web_url, timeout=60) as client:

        async def shown(uid: str) -> bool:
            return uid in [g["uid"] for g in (await client.get("/api/live")).json()]

        server_hub = LiveHub()
        async with queue_for(False, repo, server_hub, lambda _: None):
            await _heard(url, shown, "web-listening")
            spectator = asyncio.create_task(_spectate(web_url))
            await TournamentRunner(repo, "live", hub=server_hub, ladder=None).run()
            return await asyncio.wait_for(spectator, 30)


@pytest.mark.slow
def test_a_referee_web_process_shows_the_games_the_server_plays_live(
    pg_url: str, tmp_path: Path
) -> None:
    """``referee web --db`` in a process of its own streams a game the server plays itself:
    its start, every move and its end."""
    repo = Repository.open(pg_url)
    make_tournament(repo, "live", [RANDOM, GREEDY], turn_limit=16)
    address = tmp_path / "url"
    command = [*REFEREE, "web", "--db", pg_url, "--listen", "127.0.0.1:0"]
    web = subprocess.Popen([*command, "--address-file", str(address)], cwd=tmp_path)
    try:
        while not (address.exists() and address.read_text().strip()):
            assert web.poll() is None, f"referee web exited with {web.returncode}"
            time.sleep(0.05)
        web_url = address.read_text().split()[0]
        uid, events = asyncio.run(asyncio.wait_for(_run_beside(repo, pg_url, web_url), 150))
    finally:
        web.send_signal(signal.SIGTERM)
        assert web.wait(20) == 0
    _assert_followed(repo, uid, events)
    repo.close()


def test_a_listener_skips_the_events_of_its_own_process() -> None:
    """Events tagged with the listener's own origin are not fed to its hub (it has them
    already); others' are."""

    async def scenario() -> list[str]:
        hub = LiveHub()
        listener = LiveListener("postgresql://nobody@127.0.0.1/none", hub, own_origin="me")
        start = {
            "kind": "start",
            "game": "tetress",
            "players": ["a", "b"],
            "seat_names": ["RED", "BLUE"],
            "position": "",
        }
        listener.apply(json.dumps({**start, "uid": "mine", "origin": "me"}))
        listener.apply(json.dumps({**start, "uid": "theirs", "origin": "other"}))
        listener.apply(json.dumps({**start, "uid": "a-worker's"}))
        return [live.uid for live in hub.running()]

    assert asyncio.run(scenario()) == ["theirs", "a-worker's"]
