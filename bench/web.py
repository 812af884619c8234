"""Benchmark: the web front under load, served by uvicorn on 127.0.0.1 as in ``referee serve``.

Measures, in one run:
- the Tetress leaderboard page of ``--bots`` bots and ``--games`` games (default 500 / 100,000,
  a real SQLite file): the time to build the tables once (the fit, in a worker thread, when a
  game is stored); the page rendered in its handler with warm tables, p50 and p99 (the
  rendered table is kept per order until the next game; its first rendering is given too);
  and the page's HTTP round trip; the baseline is the round trip of ``/healthz`` (a one-line
  page) in the same run;
- live lag: ``--spectators`` SSE clients (default 200, in a separate process, so their parsing
  does not run on the server's loop) follow one live game; each move is put in the live hub on
  the server's loop and the lag is from then to each client reading the event (same machine
  clock), p50 and p99; baseline: the same with one spectator;
- the replay page of a stored game with its record (first view: replay and render), median;
- the game page of a 150-ply game with a think record on every move and a stored reference
  evaluation (``bench/web_game_page.py``): server time (in the handler) of the first view, the
  warm page and the per-ply fragment, p50 and p99; the baseline is the same 150 moves stored
  with neither, in the same run (``--game-page-only`` measures only this).

Usage: python bench/web.py [--bots 500] [--games 100000] [--spectators 200] [--json]
       python bench/web.py --game-page-only [--json]
With ``--json`` the last line is one JSON object with the figures. The machine is shared and
has two cores: figures are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from sqlalchemy import insert
from web_live import live_lag

from engine.registry import load_game
from referee.asgi.server import WebServer
from referee.live.hub import LiveHub
from referee.storage import Repository, SourceKind
from referee.storage.models import GameRow, GameSeat
from referee.web.app import create_app
from referee.web.context import WebSettings


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def populate(repo: Repository, bots: int, games: int, seed: int) -> list[int]:
    """``bots`` bot versions (10 owners) and ``games`` Tetress results, bulk-inserted (the
    leaderboard reads results only, so these rows carry no moves or records)."""
    rng = random.Random(seed)
    owners = [repo.create_player(f"student{i:02d}").name for i in range(10)]
    ids = [
        repo.add_bot_version(
            f"bot{i:03d}", "v1", source_kind=SourceKind.REMOTE, location="-", owner=owners[i % 10]
        ).id
        for i in range(bots)
    ]
    strength = {v: rng.gauss(0, 200) for v in ids}
    start = datetime(2026, 9, 1, tzinfo=UTC)
    game_rows, seat_rows = [], []
    for n in range(games):
        a, b = rng.sample(ids, 2)
        p = 1 / (1 + 10 ** ((strength[b] - strength[a]) / 400))
        roll = rng.random()
        winner = None if roll < 0.05 else (0 if roll < 0.05 + 0.95 * p else 1)
        result = "1/2-1/2" if winner is None else ("1-0" if winner == 0 else "0-1")
        when = start + timedelta(seconds=30 * n)
        game_rows.append(
            {
                "id": n + 1,
                "uid": f"g{n:07d}",
                "game": "tetress",
                "verdict": "normal",
                "reason": "",
                "result": result,
                "winner_seat": winner,
                "plies": 40,
                "moves": [],
                "started_at": when,
                "finished_at": when + timedelta(seconds=20),
            }
        )
        for seat, version in enumerate((a, b)):
            score = 0.5 if winner is None else float(winner == seat)
            seat_rows.append(
                {"game_id": n + 1, "seat": seat, "bot_version_id": version, "score": score}
            )
    with repo.db.write() as s:
        for chunk in range(0, games, 20_000):
            s.execute(insert(GameRow), game_rows[chunk : chunk + 20_000])
            s.execute(insert(GameSeat), seat_rows[2 * chunk : 2 * (chunk + 20_000)])
    return ids


def stored_game(repo: Repository, versions: list[int], seed: int) -> int:
    """One real random Tetress game with its record, stored as the referee stores games."""
    import web_game_page as gp

    game = load_game("tetress")
    rng = random.Random(seed)
    state = game.new_state()
    while state.outcome() is None:
        state.apply(rng.choice(list(state.legal_moves)))
    return gp.store(repo, versions, list(state.history), think=False)


class Served:
    """The web app on uvicorn, on its own event loop in a thread (the referee's loop)."""

    def __init__(self, app: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = WebServer(app, "127.0.0.1", 0)
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(self.server.start())
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        ready.wait(30)

    def call(self, fn: Any, *args: Any) -> None:
        self.loop.call_soon_threadsafe(fn, *args)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def render_times(app: Any, path: str, n: int) -> list[float]:
    """Milliseconds to build the page in its handler (tables check, sort, template), with no
    network or server in the way: what "renders server-side" means."""
    from starlette.requests import Request

    from referee.web import pages

    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [],
        "app": app,
        "path_params": {"game": "tetress"},
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 1),
    }
    out = []
    for _ in range(n):
        t = time.perf_counter()
        response = pages.leaderboard(Request(scope))
        out.append((time.perf_counter() - t) * 1000)
        assert response.status_code == 200
    return out


def round_trips(client: httpx.Client, path: str, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        response = client.get(path)
        out.append((time.perf_counter() - t) * 1000)
        assert response.status_code == 200, (path, response.status_code)
    return out


def game_page_figures(requests: int) -> dict[str, float]:
    """The 150-ply game page with think records, and its baseline (see the module doc)."""
    import web_game_page as gp

    from referee.web.thinking import PublishThinking

    with tempfile.TemporaryDirectory() as tmp:
        repo = Repository.open(str(Path(tmp) / "page.db"))
        versions = [
            repo.add_bot_version(name, "v1", source_kind=SourceKind.REMOTE, location="-").id
            for name in ("a", "b")
        ]
        history = gp.long_game(3)
        think_id = gp.store(repo, versions, history, think=True)
        plain_id = gp.store(repo, versions, history, think=False)
        settings = WebSettings(
            secret=os.urandom(32),
            refresh_s=3600,
            analysis="off",
            publish_thinking=PublishThinking.ALWAYS,
        )
        app = create_app(repo, LiveHub(), settings)
        app.state.web.tables.refresh()
        figures: dict[str, float] = {}
        for key, game_id in (("think", think_id), ("plain", plain_id)):
            cold = [gp.cold_ms(app, game_id) for _ in range(max(3, requests // 20))]
            warm = [gp.handler_ms(app, game_id) for _ in range(requests)]
            rng = random.Random(5)
            plies = [rng.randint(0, gp.PLIES) for _ in range(requests)]
            step = [gp.handler_ms(app, game_id, p, fragment=True) for p in plies]
            figures[f"game_page_{key}_first_ms"] = round(statistics.median(cold), 2)
            figures[f"game_page_{key}_ms_p50"] = round(percentile(warm, 50), 2)
            figures[f"game_page_{key}_ms_p99"] = round(percentile(warm, 99), 2)
            figures[f"game_ply_{key}_ms_p50"] = round(percentile(step, 50), 2)
            figures[f"game_ply_{key}_ms_p99"] = round(percentile(step, 99), 2)
        repo.close()
    return figures


def game_page_main(requests: int, as_json: bool) -> int:
    f = game_page_figures(requests)
    print("game page, 150 plies, think records on every move, server time in the handler:")
    for part, label in (("first", "first view"), ("page", "page"), ("ply", "ply step")):
        if part == "first":
            think, plain = f["game_page_think_first_ms"], f["game_page_plain_first_ms"]
            print(
                f"  {label}: median {think} ms (without think records {plain} ms, "
                f"ratio {think / max(plain, 1e-3):.2f}x)"
            )
            continue
        prefix = "game_page" if part == "page" else "game_ply"
        think, plain = f[f"{prefix}_think_ms_p50"], f[f"{prefix}_plain_ms_p50"]
        print(
            f"  {label}: p50 {think} ms, p99 {f[f'{prefix}_think_ms_p99']} ms (without think "
            f"records p50 {plain} ms, ratio {think / max(plain, 1e-3):.2f}x)"
        )
    if as_json:
        print(json.dumps(f))
    return 0


def main() -> int:
    args = _parser().parse_args()
    if args.game_page_only:
        return game_page_main(args.requests, args.json)
    s = _measure(args)
    page_figures = game_page_figures(min(args.requests, 100))
    figures = {
        "leaderboard_ms_p50": round(percentile(s.board, 50), 2),
        "leaderboard_ms_p99": round(percentile(s.board, 99), 2),
        "live_lag_ms_p50": round(percentile(s.many, 50), 2),
        "live_lag_ms_p99": round(percentile(s.many, 99), 2),
        "replay_page_ms": round(statistics.median(s.replay), 2),
        "leaderboard_first_render_ms": round(statistics.median(s.cold), 2),
        "leaderboard_http_ms_p50": round(percentile(s.http_board, 50), 2),
        "leaderboard_http_ms_p99": round(percentile(s.http_board, 99), 2),
        "healthz_ms_p50": round(percentile(s.base, 50), 2),
        "live_lag_one_spectator_ms_p50": round(percentile(s.one, 50), 2),
        "tables_build_s": round(s.build_s, 2),
        "bots": s.rows,
        "games": args.games,
        "spectators": args.spectators,
        "events_received": len(s.many),
        "leaderboard_bytes": s.size,
        **page_figures,
    }
    _print_summary(args, s, figures)
    if args.json:
        print(json.dumps(figures))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bots", type=int, default=500)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--spectators", type=int, default=200)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--plies", type=int, default=60)
    parser.add_argument("--gap", type=float, default=0.05, help="seconds between live moves")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--game-page-only", action="store_true", help="only the 150-ply game page figures"
    )
    return parser


@dataclass
class _Samples:
    """What one run timed (ms unless named ``_s``), and the leaderboard's rows and bytes."""

    populate_s: float
    build_s: float
    rows: int
    board: list[float]
    cold: list[float]
    http_board: list[float]
    base: list[float]
    size: int
    replay: list[float]
    one: list[float]
    many: list[float]


def _measure(args: argparse.Namespace) -> _Samples:
    """Fill a database, build the tables, and time the pages and the live lag over HTTP."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Repository.open(str(Path(tmp) / "bench.db"))
        t = time.perf_counter()
        versions = populate(repo, args.bots, args.games, args.seed)
        populate_s = time.perf_counter() - t
        replay_ids = [stored_game(repo, versions[:2], seed) for seed in range(10)]
        hub = LiveHub()
        app = create_app(repo, hub, WebSettings(secret=os.urandom(32), refresh_s=3600))
        web = app.state.web
        t = time.perf_counter()
        snapshot = web.tables.refresh()
        build_s = time.perf_counter() - t
        served = Served(app)
        try:
            with httpx.Client(base_url=served.server.url, timeout=60) as client:
                round_trips(client, "/leaderboard/tetress", 5)
                base = round_trips(client, "/healthz", args.requests)
                http_board = round_trips(client, "/leaderboard/tetress", args.requests)
                board = render_times(app, "/leaderboard/tetress", args.requests)
                cold = []
                for _ in range(10):
                    web.fragments = type(web.fragments)(32)  # a game was just stored
                    cold += render_times(app, "/leaderboard/tetress", 1)
                size = len(client.get("/leaderboard/tetress").content)
                replay = [round_trips(client, f"/games/{g}", 1)[0] for g in replay_ids]
            url = served.server.url
            one = live_lag(url, served.call, hub, 1, args.plies, args.gap)
            many = live_lag(url, served.call, hub, args.spectators, args.plies, args.gap)
        finally:
            served.stop()
            repo.close()
    rows = len(snapshot.tables["tetress"].rows)
    return _Samples(
        populate_s, build_s, rows, board, cold, http_board, base, size, replay, one, many
    )


def _print_summary(args: argparse.Namespace, s: _Samples, figures: dict[str, Any]) -> None:
    print(f"database: {args.bots} bots, {args.games} games (bulk insert {s.populate_s:.1f} s)")
    print(f"tables build (fit, ladder, histories; once per stored game): {s.build_s:.2f} s")
    print(
        f"leaderboard page ({s.rows} rows, {s.size // 1024} KiB) rendered server-side: p50 "
        f"{figures['leaderboard_ms_p50']} ms, p99 {figures['leaderboard_ms_p99']} ms"
    )
    print(
        f"  first render after a game is stored (the table itself): median "
        f"{figures['leaderboard_first_render_ms']} ms"
    )
    print(
        f"  over HTTP: p50 {figures['leaderboard_http_ms_p50']} ms, p99 "
        f"{figures['leaderboard_http_ms_p99']} ms; /healthz baseline p50 "
        f"{figures['healthz_ms_p50']} ms (ratio "
        f"{percentile(s.http_board, 50) / percentile(s.base, 50):.1f}x)"
    )
    print(
        f"live lag, {args.spectators} spectators ({len(s.many)} events): p50 "
        f"{figures['live_lag_ms_p50']} ms, p99 {figures['live_lag_ms_p99']} ms; one spectator "
        f"p50 {figures['live_lag_one_spectator_ms_p50']} ms (ratio "
        f"{percentile(s.many, 50) / max(percentile(s.one, 50), 1e-3):.1f}x)"
    )
    print(f"replay page (first view, median of {len(s.replay)}): {figures['replay_page_ms']} ms")
    print(
        f"game page, 150 plies with think records (server time): first view "
        f"{figures['game_page_think_first_ms']} ms, warm p50 {figures['game_page_think_ms_p50']} "
        f"ms, ply step p50 {figures['game_ply_think_ms_p50']} ms (without think records: "
        f"{figures['game_page_plain_ms_p50']} ms)"
    )


if __name__ == "__main__":
    sys.exit(main())
