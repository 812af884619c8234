"""Live spectating: the list of games being played and each game's move stream over SSE.

The stream comes from the referee's :class:`~referee.live.hub.LiveHub` on the same event
loop. Each event (with its board picture) is encoded once per game and ply and shared by every
spectator, so 200 spectators cost 200 socket writes per move, not 200 renderings.

Events (``text/event-stream``):

- ``start``: ``{uid, game, players, seat_names, moves: [...], board, clocks, to_move}``, the game
  so far in one message (a late spectator gets one board, not one per past move);
- ``move``: ``{ply, seat, seat_name, move, time_s, clocks, to_move, position, grid, last,
  palette, status}``, once per move: the board as its grid of cell characters (a few hundred
  bytes) rather than a new SVG picture (25 KB), which the page redraws the pieces from;
- ``end``: ``{result, verdict, termination, reason, winner_seat, sentence}``, then the stream
  closes.

A comment line every 15 s keeps idle connections open through proxies.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from engine.adjudication.verdicts import Verdict
from engine.game import State
from engine.registry import load_game
from engine.render import board_style, render_svg, status_line
from engine.render.style import fill_for
from referee.live.hub import LiveEnd, LiveGame, LiveMove
from referee.web.context import web_of
from referee.web.replay import new_cells, result_sentence

HEARTBEAT_S = 15.0
#: Encoded events kept (per game and ply); old games fall out first.
ENCODED_CACHE = 4096


class EventCache:
    """Encoded SSE ``move`` events by (game uid, index), shared by all spectators."""

    def __init__(self, size: int = ENCODED_CACHE) -> None:
        self.size = size
        self._events: OrderedDict[tuple[str, int], bytes] = OrderedDict()

    def move(self, live: LiveGame, index: int, move: LiveMove) -> bytes:
        key = (live.uid, index)
        found = self._events.get(key)
        if found is None:
            payload = {**move_payload(live, index, move), **board_update(live, index, move)}
            found = encode("move", payload, index + 1)
            self._events[key] = found
            while len(self._events) > self.size:
                self._events.popitem(last=False)
        return found


def encode(event: str, data: Mapping[str, object], event_id: int | None = None) -> bytes:
    head = f"event: {event}\n" + (f"id: {event_id}\n" if event_id is not None else "")
    return (head + f"data: {json.dumps(data, separators=(',', ':'))}\n\n").encode()


def board_svg(live: LiveGame, position: str) -> str:
    game = load_game(live.game)
    try:
        state = game.state_from_string(position)
    except Exception:
        state = game.new_state()
    return render_svg(state, cell=30, title=f"{game.title} (live)")


def _state(live: LiveGame, position: str) -> State[Any]:
    game = load_game(live.game)
    try:
        return game.state_from_string(position)
    except Exception:
        return game.new_state()


def board_update(live: LiveGame, index: int, move: LiveMove) -> dict[str, object]:
    """The board after ``move`` as data: each row's cell characters, the cells the move
    filled, the colour of each character, and the status line under the board."""
    state = _state(live, move.position)
    before = live.moves[index - 1].position if index > 0 else live.initial_position
    grid = state.grid()
    prev = _state(live, before).grid()
    last = [list(cell) for cell in sorted(new_cells(prev, grid))]
    style = board_style(live.game)
    chars = sorted({char for row in grid for char in row if char != "."})
    return {
        "position": move.position,
        "grid": grid,
        "last": last,
        "palette": {ch: [style.names.get(ch, f"c{ord(ch)}"), fill_for(style, ch)] for ch in chars},
        "tokens": style.tokens,
        "status": status_line(state),
    }


def _to_move(live: LiveGame, plies: int) -> str:
    return live.seat_names[plies % 2]


def move_payload(live: LiveGame, index: int, move: LiveMove) -> dict[str, object]:
    return {
        "ply": index + 1,
        "seat": move.seat,
        "seat_name": live.seat_names[move.seat] if move.seat < 2 else str(move.seat),
        "move": move.action,
        "time_s": round(move.time_s, 4),
        "clocks": list(move.clocks),
        "to_move": _to_move(live, index + 1),
    }


def end_payload(live: LiveGame, end: LiveEnd) -> dict[str, object]:
    if end.verdict is Verdict.ABORTED:
        head = "Aborted"
    elif end.winner_seat is None:
        head = "Draw"
    else:
        head = f"{live.seat_names[end.winner_seat]} wins"
    return {
        "result": end.result,
        "verdict": str(end.verdict),
        "termination": str(end.termination or ""),
        "reason": end.reason,
        "winner_seat": end.winner_seat,
        "sentence": result_sentence(head, end.reason, head),
    }


def start_payload(live: LiveGame, moves: list[LiveMove]) -> dict[str, object]:
    position = moves[-1].position if moves else live.initial_position
    clocks: list[float | None] = list(moves[-1].clocks) if moves else []
    return {
        "uid": live.uid,
        "game": live.game,
        "players": list(live.players),
        "seat_names": list(live.seat_names),
        "moves": [move_payload(live, i, m) for i, m in enumerate(moves)],
        "board": board_svg(live, position),
        "clocks": clocks,
        "to_move": _to_move(live, len(moves)),
    }


#: A spectator's queue item: (move index, encoded event); ``None`` ends the stream.
Item = tuple[int, bytes] | None


class Broadcast:
    """One reader of a live game's feed that hands each encoded event to every spectator.

    A spectator costs one queue and one ``put_nowait`` per event: the game's feed is followed
    once, however many watch, and each event is encoded once.
    """

    def __init__(self, live: LiveGame, cache: EventCache, done: Callable[[str], object]) -> None:
        self.live = live
        self.cache = cache
        self.subscribers: set[asyncio.Queue[Item]] = set()
        self._done = done
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        index = 0
        try:
            async for event in self.live.follow():
                if isinstance(event, LiveEnd):
                    data = encode("end", end_payload(self.live, event))
                    for queue in self.subscribers:
                        queue.put_nowait((index, data))
                    break
                data = self.cache.move(self.live, index, event)
                index += 1
                for queue in self.subscribers:
                    queue.put_nowait((index, data))
        finally:
            for queue in self.subscribers:
                queue.put_nowait(None)
            self._done(self.live.uid)


class Spectators:
    """The broadcasts of the games being watched, by game id (all on the server's loop)."""

    def __init__(self, cache: EventCache) -> None:
        self.cache = cache
        self._broadcasts: dict[str, Broadcast] = {}

    def join(self, live: LiveGame) -> asyncio.Queue[Item]:
        broadcast = self._broadcasts.get(live.uid)
        if broadcast is None:
            broadcast = Broadcast(live, self.cache, self._broadcasts.pop)
            self._broadcasts[live.uid] = broadcast
        queue: asyncio.Queue[Item] = asyncio.Queue()
        broadcast.subscribers.add(queue)
        return queue

    def leave(self, live: LiveGame, queue: asyncio.Queue[Item]) -> None:
        broadcast = self._broadcasts.get(live.uid)
        if broadcast is not None:
            broadcast.subscribers.discard(queue)


async def stream(live: LiveGame, spectators: Spectators) -> AsyncIterator[bytes]:
    """The SSE byte stream of one spectator: the game so far, then each event."""
    sent = len(live.moves)
    yield b"retry: 3000\n\n"
    yield encode("start", start_payload(live, list(live.moves[:sent])), sent)
    if live.end is not None:
        yield encode("end", end_payload(live, live.end))
        return
    # Joined in the same step as ``sent`` was read: events for moves up to ``sent`` that the
    # broadcast has not handed out yet are skipped, later ones all arrive.
    queue = spectators.join(live)
    try:
        while True:
            try:
                async with asyncio.timeout(HEARTBEAT_S):
                    item = await queue.get()
            except TimeoutError:
                yield b": keep-alive\n\n"
                continue
            if item is None:
                return
            index, data = item
            if index > sent or data.startswith(b"event: end"):
                yield data
    finally:
        spectators.leave(live, queue)


def _find(request: Request) -> LiveGame:
    live = web_of(request).hub.get(request.path_params["uid"])
    if live is None:
        raise HTTPException(404, "no live game with that id (finished games are under /games)")
    return live


async def events(request: Request) -> Response:
    live = _find(request)
    spectators: Spectators = request.app.state.spectators
    return StreamingResponse(
        stream(live, spectators),
        media_type="text/event-stream",
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )


def running(request: Request) -> list[LiveGame]:
    return sorted(web_of(request).hub.running(), key=lambda g: g.uid)


async def live_list(request: Request) -> Response:
    web = web_of(request)
    fragment = request.headers.get("hx-request") == "true"
    return web.render(
        request, "_live_rows.html" if fragment else "live.html", {"games": running(request)}
    )


async def live_game(request: Request) -> Response:
    web = web_of(request)
    live = _find(request)
    return web.render(request, "live_game.html", {"live": live})
