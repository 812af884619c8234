"""The load and the figures of ``bench/deadline.py``: its readers' process, percentiles, the
ladder's figures."""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


async def readers_main(url: str, count: int, think: float) -> dict[str, Any]:
    """``count`` readers, each reading a leaderboard, bot or game page, then pausing."""
    import httpx

    latencies: list[float] = []
    errors: list[str] = []
    ids: dict[str, list[int]] = {"bots": [], "games": []}
    stop = asyncio.Event()
    limits = httpx.Limits(max_connections=count, max_keepalive_connections=count)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30) as client:

        async def discover() -> None:
            while not stop.is_set():
                try:
                    games = (await client.get("/api/games?limit=200")).json()
                    rows = games.get("games", games) if isinstance(games, dict) else games
                    ids["games"] = [g["id"] for g in rows][:200]
                    board = (await client.get("/api/leaderboard/tetress")).json()
                    rows = board.get("rows", []) if isinstance(board, dict) else board
                    ids["bots"] = [r["bot_id"] for r in rows if "bot_id" in r][:300]
                except Exception as exc:
                    errors.append(f"discover: {exc!r}")
                await asyncio.sleep(5)

        async def reader(rng: random.Random) -> None:
            await asyncio.sleep(rng.uniform(0, think))
            while not stop.is_set():
                kind = rng.choice(("leaderboard", "bot", "game"))
                path = "/leaderboard/tetress"
                if kind == "bot" and ids["bots"]:
                    path = f"/bots/{rng.choice(ids['bots'])}"
                elif kind == "game" and ids["games"]:
                    path = f"/games/{rng.choice(ids['games'])}"
                began = time.perf_counter()
                try:
                    response = await client.get(path, headers={"accept-encoding": "gzip"})
                    if response.status_code != 200:
                        errors.append(f"{path}: {response.status_code}")
                    latencies.append((time.perf_counter() - began) * 1000)
                except Exception as exc:
                    errors.append(f"{path}: {exc!r}")
                await asyncio.sleep(think * rng.uniform(0.5, 1.5))

        tasks = [asyncio.create_task(discover())]
        tasks += [asyncio.create_task(reader(random.Random(i))) for i in range(count)]
        await asyncio.to_thread(sys.stdin.read)  # until the bench closes our stdin
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
    return {"latencies_ms": latencies, "errors": errors[:50], "error_count": len(errors)}


def cpu_seconds(pid: int) -> float:
    """The CPU seconds (user and system) process ``pid`` has used so far (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 1)


def cpu_figures(closers: list[Any], **load: int) -> dict[str, float]:
    """CPU seconds so far: this process (the server, and its web front when in process), the
    ``load`` processes' and, with --web-process, the web process's (the closer with a
    ``proc``)."""
    cpu = {"server": cpu_seconds(os.getpid())}
    cpu |= {name: cpu_seconds(pid) for name, pid in load.items()}
    for web in (c for c in closers if hasattr(c, "proc")):
        cpu["web_process"] = cpu_seconds(web.proc.pid)
    return cpu


def ladder_figures(repo: Any) -> dict[str, Any]:
    """Ladder games per bot with an accepted version, and acceptance to first ladder game."""
    from referee.storage import submissions as rows
    from referee.storage.enums import SubmissionStatus

    playing: dict[str, Any] = {}  # each bot's latest accepted version: the one scheduled
    for s in rows.list_submissions(repo.db):
        if s.status is SubmissionStatus.ACCEPTED:
            playing[s.bot_name] = s
    accepted = list(playing.values())
    games = [g for g in repo.list_games() if g.tournament_id is None]
    per_bot: dict[str, int] = {s.bot_name: 0 for s in accepted}
    first_start: dict[int, float] = {}
    version_bot = {s.bot_version_id: s.bot_name for s in accepted}
    for g in games:
        for seat in g.seats:
            bot = version_bot.get(seat.bot_version_id)
            if bot is not None:
                per_bot[bot] += 1
                when = g.started_at.timestamp() if g.started_at else 0.0
                first_start[seat.bot_version_id] = min(
                    first_start.get(seat.bot_version_id, when), when
                )
    delays = [
        first_start[s.bot_version_id] - s.validated_at.timestamp()
        for s in accepted
        if s.validated_at is not None and s.bot_version_id in first_start
    ]
    counts = sorted(per_bot.values()) or [0]
    return {
        "ladder_games": len(games),
        "ladder_games_per_bot": {
            "min": counts[0],
            "median": statistics.median(counts),
            "max": counts[-1],
        },
        "ladder_first_game_p50_s": round(percentile(delays, 50), 1),
        "ladder_first_game_max_s": round(max(delays), 1) if delays else None,
        "playing_versions_without_ladder_game": sum(
            1 for s in accepted if s.bot_version_id not in first_start
        ),
    }
