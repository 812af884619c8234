"""Benchmark: the hour before a deadline, replayed on this machine.

One server process, as ``referee serve --submissions`` runs it (the gRPC Submissions service,
the web front on the same event loop, the ladder of submitted bots, a real SQLite file, the
sandbox), and two load processes of the class:

* a roster of ``--teams`` teams uploads ``--uploads`` versions over ``--minutes`` minutes (a
  Poisson burst; every team once, then random teams again), each a different version of an
  example or reference bot (a changed comment), over real gRPC, each upload's stream kept
  open until its final verdict: ``first_verdict_*`` (upload start to the first check's
  verdict), ``full_validation_p99_s`` (upload start to the final verdict), ``queue_wait_max_s``
  (the longest wait of a version for its full games);
* ``--readers`` concurrent readers (another process) of the leaderboard, bot pages and game
  pages, each reading a page then pausing ``--think`` s: ``page_p50_ms``, ``page_p99_ms``;
* ``--spectators`` SSE spectators (another process, ``bench/web_live.py``'s client) follow a
  live game whose moves the server publishes every 0.5 s: ``sse_lag_p99_ms``;
* the ladder plays the accepted versions while all this runs: ``ladder_games_per_bot``
  (min / median / max over bots with an accepted version) and ``ladder_first_game_*_s``
  (acceptance to the version's first ladder game's start).

The baseline, in the same run: the first check and the full validation of one version on the
idle server before the burst (``baseline_first_check_s``, ``baseline_full_s``).

Usage: python bench/deadline.py [--teams 300 --uploads 300 --minutes 10] [--json]
       python bench/deadline.py --teams 60 --uploads 60 --minutes 3 --json   # a small hour
With ``--json`` the last line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# Run as a script, sys.path[0] is bench/, where bench/referee.py would shadow the package.
ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "bench"))

import grpc  # noqa: E402

from bench.common import finish  # noqa: E402
from client_sdk._submit import CHUNK  # noqa: E402
from client_sdk.proto import submissions_pb2 as spb  # noqa: E402
from client_sdk.proto import submissions_pb2_grpc  # noqa: E402

EXAMPLES = ROOT / "client_sdk" / "examples"
#: The versions students upload: course packages and SDK modules, example and reference.
SOURCES = ("course_greedy", "course_random", "greedy_bot.py", "random_bot.py")
#: Seconds between two moves of the spectated live game.
MOVE_GAP_S = 0.5
SPECTATED = "deadline-spectated"


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def version_zip(source: str, n: int) -> bytes:
    """An upload of ``source`` made version ``n`` by a comment (every version differs)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        path = EXAMPLES / source
        if path.is_dir():
            for file in sorted(path.glob("*.py")):
                text = file.read_text() + (f"\n# upload {n}\n" if file.name == "program.py" else "")
                archive.writestr(f"agent/{file.name}", text)
        else:
            archive.writestr(source, path.read_text() + f"\n# upload {n}\n")
    return buffer.getvalue()


@dataclass
class Upload:
    team: str
    n: int
    started: float = 0.0
    first_s: float | None = None
    final_s: float | None = None
    status: str = ""
    error: str = ""


async def upload(address: str, token: str, job: Upload, data: bytes) -> None:
    """One upload over gRPC, kept open until its final verdict (the first check's time too)."""
    job.started = time.monotonic()
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = submissions_pb2_grpc.SubmissionsStub(channel)
            requests = [spb.SubmitRequest(start=spb.SubmitStart(size=len(data)))]
            requests += [
                spb.SubmitRequest(chunk=data[i : i + CHUNK]) for i in range(0, len(data), CHUNK)
            ]
            call = stub.Submit(iter(requests), metadata=[("authorization", f"Bearer {token}")])
            async for event in call:
                kind = event.WhichOneof("kind")
                now = time.monotonic() - job.started
                if kind == "checked":
                    job.first_s = now
                    job.status = event.checked.status
                elif kind == "validated":
                    job.final_s = now
                    job.first_s = job.first_s if job.first_s is not None else now
                    job.status = event.validated.status
    except grpc.aio.AioRpcError as exc:
        job.error = f"{exc.code().name}: {exc.details()}"


@dataclass
class Server:
    """Everything ``referee serve --submissions`` runs, on this loop."""

    repo: Any
    submissions: Any
    address: str
    web_url: str
    hub: Any
    ladder: Any
    closers: list[Any] = field(default_factory=list)


async def start_server(workdir: Path, games_per_hour: float, slots: int) -> Server:
    from engine.registry import load_game
    from referee.asgi.server import WebServer
    from referee.hosting.autoplay import AutoplaySettings, SubmittedLadder
    from referee.hosting.casual import CasualRecorder
    from referee.live.hub import LiveHub
    from referee.match.clock import TimeControl
    from referee.rpc.uploads import SubmissionService
    from referee.server.app import RefereeServer
    from referee.storage import Repository
    from referee.submissions.limits import UploadLimits
    from referee.submissions.service import Submissions
    from referee.submissions.store import SubmissionStore
    from referee.submissions.validate import ValidationSettings
    from referee.web.app import create_app
    from referee.web.context import WebSettings

    repo = Repository.open(str(workdir / "deadline.db"))
    limits = UploadLimits(max_submissions_per_window=10**6, max_stored_bytes_per_player=10**12)
    submissions = Submissions(
        repo,
        SubmissionStore(workdir / "store"),
        limits=limits,
        validation=ValidationSettings(),
        concurrency=slots,
    )
    service = SubmissionService(submissions)
    hub = LiveHub()
    server = RefereeServer(games=["tetress"], services=[service])
    address = await server.start("127.0.0.1:0")
    settings = WebSettings(secret=b"deadline-bench-secret-0123456789", analysis="off")
    web = WebServer(create_app(repo, hub, settings, submissions=submissions), "127.0.0.1", 0)
    await web.start()
    ladder = SubmittedLadder(
        repo,
        AutoplaySettings(load_game("tetress"), TimeControl(), 512, games_per_hour, 1),
        CasualRecorder(repo),
        hub,
    )
    return Server(repo, submissions, address, web.url, hub, ladder, [server, web])


def load_process(mode: str, url: str, count: int, think: float) -> subprocess.Popen[str]:
    """A load process of its own (its CPU is not the server loop's); it reports on stdin EOF."""
    return subprocess.Popen(
        [sys.executable, __file__, f"--_{mode}", url, "--count", str(count), f"--think={think}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


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


async def publish_live(hub: Any, plies: int) -> list[float]:
    """A live game on the server's hub, a move every :data:`MOVE_GAP_S`: the publish times
    (epoch s) by ply, for the spectators' lag."""
    from engine.registry import load_game
    from referee.live.hub import LiveEnd, LiveMove

    game = load_game("tetress")
    state = game.new_state()
    uid = SPECTATED
    rng = random.Random(5)
    sent = [0.0] * (plies + 1)
    for i in range(plies):
        if state.outcome() is not None:
            state = game.new_state()
        seat = state.to_move
        move = rng.choice(list(state.legal_moves))
        state.apply(move)
        text = game.move_to_text(move)
        sent[i + 1] = time.time()
        hub.move(uid, LiveMove(i, seat, text, 0.05, state.to_string(), (60.0, 60.0)))
        await asyncio.sleep(MOVE_GAP_S)
    hub.finish(uid, LiveEnd("1-0", "normal", "no_legal_move", "done", 0))
    return sent


def roster(teams: int, uploads: int, seconds: float, seed: int) -> list[tuple[float, Upload]]:
    """When each upload starts (a Poisson burst over ``seconds``) and whose it is: every team
    once (in random order), then random teams again."""
    rng = random.Random(seed)
    names = [f"team{i:03d}" for i in range(teams)]
    order = rng.sample(names, len(names))[:uploads]
    order += [rng.choice(names) for _ in range(uploads - len(order))]
    times = sorted(rng.uniform(0, seconds) for _ in range(uploads))
    return [(at, Upload(team, n)) for n, (at, team) in enumerate(zip(times, order, strict=True))]


async def measure(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    from web_live import spectator_process

    server = await start_server(workdir, args.ladder_games_per_hour, args.validation_slots)
    repo = server.repo
    tokens = {}
    for i in range(args.teams):
        name = repo.create_player(f"team{i:03d}").name
        tokens[name] = repo.issue_token(name)
    baseline = await _baseline(server, tokens["team000"])
    ladder_task = asyncio.create_task(server.ladder.run())
    seconds = args.minutes * 60
    plies = max(4, int(seconds / MOVE_GAP_S))
    _open_live_game(server.hub)
    readers = load_process("readers", server.web_url, args.readers, args.think)
    spectators = spectator_process(
        f"{server.web_url}/live/{SPECTATED}/events", args.spectators, plies
    )
    live = asyncio.create_task(_after_ready(spectators, server.hub, plies))
    plan = roster(args.teams, args.uploads, seconds, args.seed)
    began = time.monotonic()

    async def one(at: float, job: Upload) -> None:
        await asyncio.sleep(max(0.0, began + at - time.monotonic()))
        data = version_zip(SOURCES[job.n % len(SOURCES)], job.n)
        await upload(server.address, tokens[job.team], job, data)

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(
            asyncio.gather(*(one(at, job) for at, job in plan)), seconds + args.drain_s
        )
    hour_s = time.monotonic() - began
    sent = await live
    readers_out, _ = await asyncio.to_thread(readers.communicate, "", 300)
    spectators_out, _ = await asyncio.to_thread(spectators.communicate, None, 300)
    ladder_task.cancel()
    await asyncio.gather(ladder_task, return_exceptions=True)
    await server.ladder.drain(5.0)
    figures = _figures(server, plan, json.loads(readers_out.strip().splitlines()[-1]))
    received = json.loads(spectators_out.strip().splitlines()[-1])
    lags = [
        (got[ply] - sent[ply]) * 1000
        for got in received
        for ply in range(1, plies + 1)
        if got[ply] and sent[ply]
    ]
    figures.update(
        sse_lag_p50_ms=round(percentile(lags, 50), 1),
        sse_lag_p99_ms=round(percentile(lags, 99), 1),
        sse_events=len(lags),
        hour_s=round(hour_s, 1),
        **baseline,
        **_ladder_figures(repo),
    )
    for closer in server.closers:
        await closer.stop(0.5) if hasattr(closer, "address") else await closer.stop()
    repo.close()
    return figures


def _open_live_game(hub: Any) -> None:
    """The spectated game, started before its spectators connect."""
    from engine.registry import load_game

    game = load_game("tetress")
    state = game.new_state().to_string()
    hub.start(SPECTATED, "tetress", ["a/x", "b/y"], game.seat_names, state)


async def _after_ready(spectators: subprocess.Popen[str], hub: Any, plies: int) -> list[float]:
    assert spectators.stdout is not None
    line = await asyncio.to_thread(spectators.stdout.readline)
    assert line.strip() == "ready", line
    return await publish_live(hub, plies)


async def _baseline(server: Server, token: str) -> dict[str, float]:
    """One upload on the idle server: its first check's and its full validation's time."""
    job = Upload("team000", 10**6)
    await upload(server.address, token, job, version_zip(SOURCES[0], job.n))
    assert job.status == "accepted", (job.status, job.error)
    return {
        "baseline_first_check_s": round(job.first_s or 0.0, 2),
        "baseline_full_s": round(job.final_s or 0.0, 2),
    }


def _figures(
    server: Server, plan: list[tuple[float, Upload]], read: dict[str, Any]
) -> dict[str, Any]:
    jobs = [job for _, job in plan]
    first = [j.first_s for j in jobs if j.first_s is not None]
    final = [j.final_s for j in jobs if j.final_s is not None]
    unanswered = [j for j in jobs if j.final_s is None and not j.error]
    pages = read["latencies_ms"]
    statuses: dict[str, int] = {}
    for j in jobs:
        statuses[j.status or "none"] = statuses.get(j.status or "none", 0) + 1
    return {
        "teams": len({j.team for j in jobs}),
        "uploads": len(jobs),
        "first_verdict_p50_s": round(percentile(first, 50), 2),
        "first_verdict_p99_s": round(percentile(first, 99), 2),
        "full_validation_p50_s": round(percentile(final, 50), 1),
        "full_validation_p99_s": round(percentile(final, 99), 1),
        "queue_wait_max_s": round(server.submissions.queue.longest_wait_s, 1),
        "final_verdicts": statuses,
        "unanswered_uploads": len(unanswered),
        "page_requests": len(pages),
        "page_p50_ms": round(percentile(pages, 50), 1),
        "page_p99_ms": round(percentile(pages, 99), 1),
        "errors": read["error_count"] + sum(1 for j in jobs if j.error),
        "error_samples": read["errors"][:5] + [j.error for j in jobs if j.error][:5],
    }


def _ladder_figures(repo: Any) -> dict[str, Any]:
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teams", type=int, default=300)
    parser.add_argument("--uploads", type=int, default=300)
    parser.add_argument("--minutes", type=float, default=10.0, help="the burst's length")
    parser.add_argument(
        "--drain-s", type=float, default=1800.0, help="longest wait for verdicts after it"
    )
    parser.add_argument("--readers", type=int, default=200)
    parser.add_argument("--spectators", type=int, default=100)
    parser.add_argument(
        "--think", type=float, default=2.0, help="a reader's pause between pages (s)"
    )
    parser.add_argument("--ladder-games-per-hour", type=float, default=720.0)
    parser.add_argument("--validation-slots", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--_readers", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args._readers:
        print(json.dumps(asyncio.run(readers_main(args._readers, args.count, args.think))))
        return 0
    from referee.telemetry import logs as referee_logging

    referee_logging.configure("json", os.environ.get("DEADLINE_LOG", "ERROR"))
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-deadline-") as workdir:
        figures = asyncio.run(measure(args, Path(workdir)))
    figures["load_average_at_start"] = round(load, 1)
    figures["load_average_at_end"] = round(os.getloadavg()[0], 1)
    print(
        f"{figures['uploads']} uploads from {figures['teams']} teams in {args.minutes:g} min: "
        f"first verdict p50 {figures['first_verdict_p50_s']} s, p99 "
        f"{figures['first_verdict_p99_s']} s (idle server: {figures['baseline_first_check_s']} s); "
        f"final verdict p99 {figures['full_validation_p99_s']} s (idle: "
        f"{figures['baseline_full_s']} s); longest queue wait {figures['queue_wait_max_s']} s",
        file=sys.stderr if args.json else sys.stdout,
    )
    print(
        f"pages: {figures['page_requests']} requests by {args.readers} readers, p50 "
        f"{figures['page_p50_ms']} ms, p99 {figures['page_p99_ms']} ms; SSE lag p99 "
        f"{figures['sse_lag_p99_ms']} ms ({args.spectators} spectators); errors "
        f"{figures['errors']}; ladder games per bot {figures['ladder_games_per_bot']}",
        file=sys.stderr if args.json else sys.stdout,
    )
    return finish(figures, args.json)


if __name__ == "__main__":
    sys.exit(main())
