"""Live lag for ``bench/web.py``: SSE spectators (in a process of their own, so that their
parsing does not run on the server's loop) follow one live game, and the lag is from a move put
in the live hub on the server's loop to each spectator reading its event (same machine clock)."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from engine.registry import load_game
from referee.live.hub import LiveEnd, LiveHub, LiveMove

#: Run a function with its arguments on the server's loop (from another thread).
OnLoop = Callable[..., None]


async def _spectate(url: str, count: int, plies: int) -> list[list[float]]:
    """``count`` SSE clients on raw sockets (a lean client, so that the figures measure the
    server, not the client's parsing); each returns its receive times (epoch s) by ply."""
    import re
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    request = (
        f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nAccept: text/event-stream\r\n\r\n"
    ).encode()
    move = re.compile(rb'event: move\nid: \d+\ndata: \{"ply":(\d+)')
    ready = asyncio.Semaphore(0)

    async def one() -> list[float]:
        got = [0.0] * (plies + 1)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        writer.write(request)
        buffer = b""
        started = False
        while True:
            data = await reader.read(1 << 16)
            now = time.time()
            if not data:
                break
            buffer += data
            if not started and b"event: start" in buffer:
                started = True
                ready.release()
            last = 0
            for m in move.finditer(buffer):
                got[int(m.group(1))] = now
                last = m.end()
            if b"event: end" in buffer:
                break
            buffer = buffer[max(last, len(buffer) - 200) :]
        writer.close()
        return got

    tasks = [asyncio.create_task(one()) for _ in range(count)]
    for _ in range(count):
        await ready.acquire()
    print("ready", flush=True)
    return await asyncio.gather(*tasks)


def spectator_process(url: str, count: int, plies: int) -> subprocess.Popen[str]:
    here = Path(__file__).resolve().parent
    # The repository before bench/, where bench/referee.py would shadow the referee package.
    path = [str(here.parent), str(here)]
    code = (
        f"import asyncio, json, sys; sys.path[:0] = {path!r}; import web_live; "
        f"print(json.dumps(asyncio.run(web_live._spectate({url!r}, {count}, {plies}))))"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, bufsize=1
    )


def live_lag(
    url: str, call: OnLoop, hub: LiveHub, spectators: int, plies: int, gap: float
) -> list[float]:
    """Move-to-browser lag (ms) of every event received by every spectator of the web server
    at ``url``, whose loop runs ``hub`` (reached by ``call``)."""
    game = load_game("tetress")
    uid = f"live{spectators}"
    state = game.new_state()
    call(lambda: hub.start(uid, "tetress", ["a/x", "b/y"], game.seat_names, state.to_string()))
    time.sleep(0.2)
    proc = spectator_process(f"{url}/live/{uid}/events", spectators, plies)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    rng = random.Random(5)
    sent: list[float] = [0.0] * (plies + 1)
    for i in range(plies):
        seat = state.to_move
        if state.outcome() is not None:
            state = game.new_state()
        move = rng.choice(list(state.legal_moves))
        state.apply(move)
        live_move = LiveMove(
            i, seat, game.move_to_text(move), 0.05, state.to_string(), (60.0, 60.0)
        )

        def publish(m: LiveMove = live_move, ply: int = i + 1) -> None:
            sent[ply] = time.time()
            hub.move(uid, m)

        call(publish)
        time.sleep(gap)
    call(hub.finish, uid, LiveEnd("1-0", "normal", "no_legal_move", "done", 0))
    out, _ = proc.communicate(timeout=300)
    received = json.loads(out.strip().splitlines()[-1])
    return [
        (got[ply] - sent[ply]) * 1000
        for got in received
        for ply in range(1, plies + 1)
        if got[ply] and sent[ply]
    ]
