"""Live spectating over SSE, through a real uvicorn server on 127.0.0.1 port 0."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from engine.adjudication import Verdict
from engine.outcome import Termination
from engine.registry import load_game
from referee.asgi.server import WebServer
from referee.live.hub import LiveEnd, LiveHub, LiveMove, LiveObserver
from referee.match.clock import SeatClock, TimeControl
from referee.web.app import create_app
from referee.web.context import WebSettings

SETTINGS = WebSettings(secret=b"live-test-secret-0123456789")


def _moves(n: int) -> list[tuple[int, str, str]]:
    """``n`` real Tetress moves: (seat, move text, position after)."""
    game = load_game("tetress")
    state = game.new_state()
    rng = random.Random(3)
    out = []
    for _ in range(n):
        seat = state.to_move
        move = rng.choice(list(state.legal_moves))
        state.apply(move)
        out.append((seat, game.move_to_text(move), state.to_string()))
    return out


def _start(hub: LiveHub, uid: str = "g1") -> Any:
    game = load_game("tetress")
    return hub.start(
        uid,
        "tetress",
        ["alice/alpha", "bob/<b>beta</b>"],
        game.seat_names,
        game.new_state().to_string(),
    )


async def _events(response: httpx.Response) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    event = ""
    async for line in response.aiter_lines():
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            yield event, json.loads(line[6:])


@pytest_asyncio.fixture
async def served() -> AsyncIterator[tuple[WebServer, LiveHub]]:
    hub = LiveHub()
    server = WebServer(create_app(None, hub, SETTINGS), "127.0.0.1", 0)
    await server.start()
    try:
        yield server, hub
    finally:
        await server.stop()


@pytest.mark.asyncio
async def test_spectator_follows_every_move_to_the_end(
    served: tuple[WebServer, LiveHub],
) -> None:
    """A spectator gets the start, each move with its board and clocks, then the end with the
    verdict sentence, and the stream closes."""
    server, hub = served
    live = _start(hub)
    moves = _moves(6)
    got: list[tuple[str, dict[str, Any]]] = []
    async with (
        httpx.AsyncClient(base_url=server.url, timeout=10) as client,
        client.stream("GET", f"/live/{live.uid}/events") as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        stream = _events(response)
        got.append(await anext(stream))
        for i, (seat, text, position) in enumerate(moves):
            hub.move(live.uid, LiveMove(i, seat, text, 0.01, position, (59.0 - i, 60.0)))
            got.append(await anext(stream))
        hub.finish(
            live.uid,
            LiveEnd("1-0", Verdict.NORMAL, Termination.NO_LEGAL_MOVE, "BLUE has no move", 0),
        )
        got.extend([e async for e in stream])
    kinds = [k for k, _ in got]
    assert kinds == ["start"] + ["move"] * 6 + ["end"]
    assert [d["ply"] for k, d in got if k == "move"] == [1, 2, 3, 4, 5, 6]
    last = got[6][1]
    assert last["clocks"] == [54.0, 60.0] and "board" not in last
    assert sum(row.count("r") + row.count("b") for row in last["grid"]) == 24
    assert len(last["last"]) == 4 and last["position"] == moves[-1][2]
    assert got[0][1]["board"].startswith("<svg")
    assert got[-1][1]["sentence"] == "RED wins: BLUE has no move."


@pytest.mark.asyncio
async def test_late_spectator_gets_the_game_so_far_in_one_event(
    served: tuple[WebServer, LiveHub],
) -> None:
    """Joining after four moves: one start event holding all four moves and one board."""
    server, hub = served
    live = _start(hub, "g2")
    for i, (seat, text, position) in enumerate(_moves(4)):
        hub.move(live.uid, LiveMove(i, seat, text, 0.01, position))
    await asyncio.sleep(0)
    async with (
        httpx.AsyncClient(base_url=server.url, timeout=10) as client,
        client.stream("GET", "/live/g2/events") as response,
    ):
        kind, data = await anext(_events(response))
    assert kind == "start"
    assert [m["ply"] for m in data["moves"]] == [1, 2, 3, 4]
    assert data["to_move"] == "RED"
    assert data["players"][1] == "bob/<b>beta</b>"  # JSON text; the page sets it as text


@pytest.mark.asyncio
async def test_many_spectators_all_get_every_move(served: tuple[WebServer, LiveHub]) -> None:
    """Fifty spectators at once each receive every move and the end."""
    server, hub = served
    live = _start(hub, "g3")
    moves = _moves(5)

    async def spectator(client: httpx.AsyncClient, ready: asyncio.Event) -> list[str]:
        async with client.stream("GET", "/live/g3/events") as response:
            kinds = []
            async for kind, _ in _events(response):
                kinds.append(kind)
                if kind == "start":
                    ready.set()
            return kinds

    limits = httpx.Limits(max_connections=100)
    async with httpx.AsyncClient(base_url=server.url, timeout=20, limits=limits) as client:
        readies = [asyncio.Event() for _ in range(50)]
        tasks = [asyncio.create_task(spectator(client, r)) for r in readies]
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 20)
        for i, (seat, text, position) in enumerate(moves):
            hub.move(live.uid, LiveMove(i, seat, text, 0.01, position))
            await asyncio.sleep(0.01)
        hub.finish(
            live.uid,
            LiveEnd("1/2-1/2", Verdict.TURN_LIMIT, Termination.TURN_LIMIT, "turn limit", None),
        )
        results = await asyncio.wait_for(asyncio.gather(*tasks), 20)
    assert all(r == ["start"] + ["move"] * 5 + ["end"] for r in results)


@pytest.mark.asyncio
async def test_live_list_shows_running_games(served: tuple[WebServer, LiveHub]) -> None:
    """The live list and its JSON show a running game; a finished one leaves the list but its
    stream still replays to the end."""
    server, hub = served
    live = _start(hub, "g4")
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
        page = (await client.get("/live")).text
        assert "/live/g4" in page and "&lt;b&gt;beta&lt;/b&gt;" in page
        assert [g["uid"] for g in (await client.get("/api/live")).json()] == ["g4"]
        hub.finish(live.uid, LiveEnd("0-1", Verdict.TIME, Verdict.TIME, "RED ran out of time", 1))
        assert (await client.get("/api/live")).json() == []
        async with client.stream("GET", "/live/g4/events") as response:
            kinds = [k async for k, _ in _events(response)]
        assert kinds == ["start", "end"]
        assert (await client.get("/leaderboard/tetress")).status_code == 503


def test_observer_reports_both_clocks() -> None:
    """The runner's observer puts each seat's time left on the live move."""
    hub = LiveHub()

    async def run() -> LiveMove:
        live = _start(hub, "g5")
        clocks = [
            SeatClock(TimeControl(game_time_s=60.0)),
            SeatClock(TimeControl(game_time_s=60.0)),
        ]
        clocks[0].charge(1.5)
        game = load_game("tetress")
        state = game.new_state()
        move = next(iter(state.legal_moves))
        state.apply(move)

        class Entry:
            ply, seat, action, time_s = 0, 0, game.move_to_text(move), 1.5

        LiveObserver(hub, live.uid).on_move(state, Entry(), clocks)
        return live.moves[0]

    moved = asyncio.run(run())
    assert moved.clocks == (58.5, 60.0)
