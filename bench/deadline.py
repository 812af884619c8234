"""Benchmark: the hour before a deadline, replayed on this machine.

One server process, as ``referee serve --submissions`` runs it (the gRPC Submissions service,
the web front on the same event loop, the ladder of submitted bots, a real SQLite file, the
sandbox), and two load processes of the class:

* a roster of ``--teams`` teams uploads ``--uploads`` versions over ``--minutes`` minutes (a
  Poisson burst; every team once, then random teams again), each a different version of an
  example or reference bot (a changed comment), over real gRPC, each upload's stream kept
  open until its final verdict: ``first_verdict_*`` (upload start to the first check's
  verdict), ``full_validation_p99_s`` (upload start to the final verdict), ``queue_wait_max_s``
  (the longest wait of a version for its full games), ``first_check_slot_wait_max_s`` (the
  longest a first check waited for one of its own slots);
* ``--readers`` concurrent readers (another process) of the leaderboard, bot pages and game
  pages, each reading a page then pausing ``--think`` s: ``page_p50_ms``, ``page_p99_ms``;
* ``--spectators`` SSE spectators (another process, ``bench/web_live.py``'s client) follow a
  live game whose moves the server publishes every 0.5 s: ``sse_lag_p99_ms``;
* the ladder plays the accepted versions while all this runs: ``ladder_games_per_bot``
  (min / median / max over bots with an accepted version) and ``ladder_first_game_*_s``
  (acceptance to the version's first ladder game's start).

``cpu_s``: the CPU seconds of the server's process (with its web front unless --web-process),
the readers', the spectators' and the web process's, for what limits the pages.

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
from bench.deadline_parts import (  # noqa: E402
    cpu_figures,
    ladder_figures,
    percentile,
    readers_main,
)
from bench.deadline_web import (  # noqa: E402
    ADMIN_URL,
    NotifyHub,
    WebProcess,
    at_priority_zero,
    cpu_group,
    lower_server,
    open_live_game,
    scratch_database,
)
from client_sdk._submit import CHUNK  # noqa: E402
from client_sdk.proto import submissions_pb2 as spb  # noqa: E402
from client_sdk.proto import submissions_pb2_grpc  # noqa: E402

EXAMPLES = ROOT / "client_sdk" / "examples"
#: The versions students upload: course packages and SDK modules, example and reference.
SOURCES = ("course_greedy", "course_random", "greedy_bot.py", "random_bot.py")
#: Seconds between two moves of the spectated live game.
MOVE_GAP_S = 0.5
SPECTATED = "deadline-spectated"


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
    #: Where the spectated game is published: ``hub``, or ``NOTIFY`` for a web process.
    spectated: Any = None


async def start_server(
    workdir: Path, games_per_hour: float, slots: int, database: str | None = None
) -> Server:
    """The server; with ``database`` (PostgreSQL) its pages come from a ``referee web``
    process of their own (``bench/deadline_web.py``), else from its own loop."""
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

    repo = Repository.open(database or str(workdir / "deadline.db"))
    limits = UploadLimits(max_submissions_per_window=10**6, max_stored_bytes_per_player=10**12)
    submissions = Submissions(
        repo,
        SubmissionStore(workdir / "store"),
        limits=limits,
        validation=ValidationSettings(),
        concurrency=slots,
        warm_first_checks=True,
    )
    service = SubmissionService(submissions)
    hub = LiveHub()
    server = RefereeServer(games=["tetress"], services=[service])
    address = await server.start("127.0.0.1:0")
    ladder = SubmittedLadder(
        repo,
        AutoplaySettings(load_game("tetress"), TimeControl(), 512, games_per_hour, 1),
        CasualRecorder(repo),
        hub,
    )
    if database is not None:
        alone = Server(repo, submissions, address, "", hub, ladder, [server])
        return await _with_web_process(alone)
    settings = WebSettings(secret=b"deadline-bench-secret-0123456789", analysis="off")
    web = WebServer(create_app(repo, hub, settings, submissions=submissions), "127.0.0.1", 0)
    await web.start()
    return Server(repo, submissions, address, web.url, hub, ladder, [server, web])


async def _with_web_process(server: Server) -> Server:
    """``server`` with its pages from a ``referee web`` process and its spectated game
    published over ``NOTIFY`` (the ladder's own games stay on the server's hub)."""
    from referee.workers.live import LivePublisher

    publisher = LivePublisher(server.repo.db.url)
    await publisher.start()
    web = await asyncio.to_thread(WebProcess, server.repo.db.url)
    server.web_url = web.url
    server.spectated = NotifyHub(publisher)
    server.closers += [server.spectated, web]
    return server


def load_process(mode: str, url: str, count: int, think: float) -> subprocess.Popen[str]:
    """A load process of its own (its CPU is not the server loop's); it reports on stdin EOF."""
    return subprocess.Popen(
        [sys.executable, __file__, f"--_{mode}", url, "--count", str(count), f"--think={think}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


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


async def measure(
    args: argparse.Namespace, workdir: Path, database: str | None = None
) -> dict[str, Any]:
    slots = args.validation_slots
    server = await start_server(workdir, args.ladder_games_per_hour, slots, database)
    lower_server(args.server_nice, args.cpu_group)  # not the web process, started above
    repo = server.repo
    tokens = {
        (n := repo.create_player(f"team{i:03d}").name): repo.issue_token(n)
        for i in range(args.teams)
    }
    baseline = await _baseline(server, tokens["team000"])
    ladder_task = asyncio.create_task(server.ladder.run())
    seconds = args.minutes * 60
    plies = max(4, int(seconds / MOVE_GAP_S))
    readers, spectators, live = await _start_load(server, args, plies)
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
    cpu = cpu_figures(server.closers, readers=readers.pid, spectators=spectators.pid)
    readers_out, _ = await asyncio.to_thread(readers.communicate, "", 300)
    spectators_out, _ = await asyncio.to_thread(spectators.communicate, None, 300)
    ladder_task.cancel()
    await asyncio.gather(ladder_task, return_exceptions=True)
    await server.ladder.drain(5.0)
    figures = _figures(server, plan, json.loads(readers_out.strip().splitlines()[-1]))
    received = json.loads(spectators_out.strip().splitlines()[-1])
    lags = [
        (got[i] - sent[i]) * 1000
        for got in received
        for i in range(1, plies + 1)
        if got[i] and sent[i]
    ]
    figures.update(
        sse_lag_p50_ms=round(percentile(lags, 50), 1),
        sse_lag_p99_ms=round(percentile(lags, 99), 1),
        sse_events=len(lags),
        hour_s=round(hour_s, 1),
        cpu_s=cpu,
        **baseline,
        **ladder_figures(repo),
    )
    await server.submissions.close()  # the first checks' warm sandboxes
    for closer in server.closers:
        await closer.stop(0.5) if hasattr(closer, "address") else await closer.stop()
    repo.close()
    return figures


async def _start_load(
    server: Server, args: argparse.Namespace, plies: int
) -> tuple[subprocess.Popen[str], subprocess.Popen[str], asyncio.Task[list[float]]]:
    """The readers' and the spectators' processes (at niceness 0), and the spectated game's
    task (its moves' publish times)."""
    from web_live import spectator_process

    live_hub = server.spectated or server.hub
    await _open_live_game(live_hub, server.web_url)
    readers = load_process("readers", server.web_url, args.readers, args.think)
    spectators = spectator_process(
        f"{server.web_url}/live/{SPECTATED}/events", args.spectators, plies
    )
    at_priority_zero(readers.pid, spectators.pid)
    return readers, spectators, asyncio.create_task(_after_ready(spectators, live_hub, plies))


async def _open_live_game(hub: Any, web_url: str) -> None:
    """The spectated game, started (and shown by the web front) before its spectators
    connect."""
    from engine.registry import load_game

    game = load_game("tetress")
    opening = ("tetress", ["a/x", "b/y"], game.seat_names, game.new_state().to_string())
    if isinstance(hub, NotifyHub):
        await open_live_game(hub, web_url, SPECTATED, opening)
    else:
        hub.start(SPECTATED, *opening)


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
        "first_check_slot_wait_max_s": round(server.submissions.first_slots.longest_wait_s, 1),
        "final_verdicts": statuses,
        "unanswered_uploads": len(unanswered),
        "page_requests": len(pages),
        "page_p50_ms": round(percentile(pages, 50), 1),
        "page_p99_ms": round(percentile(pages, 99), 1),
        "errors": read["error_count"] + sum(1 for j in jobs if j.error),
        "error_samples": read["errors"][:5] + [j.error for j in jobs if j.error][:5],
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
    parser.add_argument(
        "--web-process",
        action="store_true",
        help="the server on PostgreSQL, its pages and live feed from a referee web process",
    )
    parser.add_argument(
        "--database",
        default=ADMIN_URL,
        help="with --web-process: the PostgreSQL server (an admin URL) a scratch database "
        "is made on (default %(default)s)",
    )
    parser.add_argument(
        "--server-nice",
        type=int,
        default=0,
        help="the server's niceness (its bots inherit it; the web process keeps 0)",
    )
    parser.add_argument(
        "--server-cpu-shares",
        type=int,
        default=0,
        help="the server and its bots in a cgroup v1 cpu group of these shares (root; 1024 is "
        "the rest's); with --web-process the pages are not in it",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--_readers", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    return parser


def _run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """The hour in the setup asked for, with which one it was."""
    setup = {"setup": "web_process" if args.web_process else "in_process"}
    setup |= {"server_nice": args.server_nice, "server_cpu_shares": args.server_cpu_shares}
    with cpu_group(args.server_cpu_shares) as args.cpu_group:
        if not args.web_process:
            return setup | asyncio.run(measure(args, workdir))
        # A PostgreSQL database's token key lives under $XDG_CONFIG_HOME: this run's, not ours.
        os.environ["XDG_CONFIG_HOME"] = str(workdir / "config")
        os.environ.setdefault("ARENA_WEB_SECRET", "deadline-bench-secret-0123456789")
        with scratch_database(args.database) as url:
            return setup | asyncio.run(measure(args, workdir, url))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args._readers:
        print(json.dumps(asyncio.run(readers_main(args._readers, args.count, args.think))))
        return 0
    from referee.telemetry import logs as referee_logging

    referee_logging.configure("json", os.environ.get("DEADLINE_LOG", "ERROR"))
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-deadline-") as workdir:
        figures = _run(args, Path(workdir))
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
