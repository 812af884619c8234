"""One server and three workers on the real PostgreSQL play a 10-bot round robin while one
worker is SIGKILLed mid-game and another SIGSTOPped past the heartbeat timeout; a spectator on
the server follows a game a worker plays."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import grpc
import psutil
import psycopg
import pytest
from workers_helpers import (
    GREEDY,
    RANDOM,
    REFEREE,
    ROOT,
    ProcessWatch,
    log_lines,
    make_tournament,
    start_worker,
    stop_workers,
)

from client_sdk.proto import arena_pb2 as apb
from client_sdk.proto import arena_pb2_grpc
from engine.adjudication.verdicts import Verdict
from referee.storage import Repository, TournamentStatus
from referee.tournament import schedule
from referee.workers.queue import conninfo

pytestmark = pytest.mark.slow

HEARTBEAT = 0.5
#: Short for a short test, but not so short that a worker starved of CPU on a busy machine
#: misses it: the heartbeat comes every 0.5 s.
STALL = 5.0


def _server(url: str, tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``referee serve`` on the database; its gRPC address."""
    address_file = tmp / "address"
    argv = [*REFEREE, "serve", "--db", url, "--listen", "127.0.0.1:0", "--no-web"]
    argv += ["--pair", "none", "--address-file", str(address_file), "--log-format", "json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with (tmp / "server.log").open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 60
    while not address_file.exists():
        assert proc.poll() is None, (tmp / "server.log").read_text()
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.1)
    return proc, address_file.read_text().split()[0]


def _job_row(url: str, job_id: int) -> tuple[str, int | None]:
    with psycopg.connect(conninfo(url)) as conn:
        row = conn.execute(
            "SELECT status::text, worker_id FROM procrastinate_jobs WHERE id = %s", (job_id,)
        ).fetchone()
    assert row is not None
    return str(row[0]), row[1]


Worker = tuple[subprocess.Popen[bytes], Path]


def _catch_mid_game(
    url: str, repo: Repository, workers: list[Worker]
) -> tuple[Worker, int, str, int]:
    """SIGSTOP one of ``workers`` while it is alive and plays a game whose slot is still empty
    (checked once it is stopped, so it stays so): (the worker, job id, game id, its worker id
    in the queue). A worker that exited on its own (75: a starved machine delayed its
    heartbeat past the stall timeout and its games were handed on, as they should be) is
    never the one caught."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        for proc, log in workers:
            if proc.poll() is not None:
                continue
            caught = _stopped_mid_game(url, repo, proc, log)
            if caught is not None:
                return (proc, log), *caught
        time.sleep(0.05)
    raise AssertionError(f"none of {[log.stem for _, log in workers]} was caught mid-game")


def _stopped_mid_game(
    url: str, repo: Repository, proc: subprocess.Popen[bytes], log: Path
) -> tuple[int, str, int] | None:
    lines = log_lines(log)
    recorded = {line["game_id"] for line in lines if line["event"] == "game_recorded"}
    playing = [
        line
        for line in lines
        if line["event"] == "game_started" and line["game_id"] not in recorded
    ]
    if not playing:
        return None
    if not _stop(proc):  # it had exited: nothing was stopped
        return None
    # Read once it is stopped: what it had written by then is all it will write.
    lines = log_lines(log)
    recorded = {line["game_id"] for line in lines if line["event"] == "game_recorded"}
    game = playing[-1]
    status, holder = _job_row(url, int(game["job_id"]))
    slot = repo.get_pairing(game["pairing_id"]).finished_games
    if (
        game["game_id"] not in recorded
        and status == "doing"
        and holder is not None
        and game["game_index"] not in slot
        and proc.poll() is None
    ):
        return int(game["job_id"]), str(game["game_id"]), holder
    proc.send_signal(signal.SIGCONT)
    return None


def _stop(proc: subprocess.Popen[bytes]) -> bool:
    """SIGSTOP ``proc`` and wait until the kernel shows it stopped; False if it had exited."""
    proc.send_signal(signal.SIGSTOP)
    try:
        process = psutil.Process(proc.pid)
        while process.status() not in (psutil.STATUS_STOPPED, psutil.STATUS_ZOMBIE):
            time.sleep(0.01)
    except psutil.NoSuchProcess:
        return False
    return proc.poll() is None


def _stepped_aside(proc: subprocess.Popen[bytes], log: Path) -> bool:
    """Whether ``proc`` exited 75 after logging that its games were handed on."""
    return proc.returncode == 75 and any(line["event"] == "lease_lost" for line in log_lines(log))


async def _spectate(address: str, worker_games: Any) -> dict[str, Any]:
    """Follow live games on the server until one ends with a result; its events."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = arena_pb2_grpc.ArenaStub(channel)
        seen: set[str] = set()
        while True:
            live = await stub.ListLiveGames(apb.ListLiveGamesRequest())
            fresh = [g.uid for g in live.games if g.uid not in seen]
            if not fresh:
                await asyncio.sleep(0.05)
                continue
            seen.add(fresh[0])
            events = []
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(30):
                    async for event in stub.WatchGame(apb.WatchGameRequest(uid=fresh[0])):
                        events.append(event)
            if events and events[-1].WhichOneof("kind") == "end" and events[-1].end.result != "*":
                return {"uid": fresh[0], "events": events}


def test_three_workers_survive_a_kill_and_a_stop_and_record_every_game_once(
    pg_url: str, tmp_path: Path
) -> None:
    """Every game of the round robin is recorded exactly once (as many as a single-machine run
    plays), the killed worker's game and the stopped worker's game are played again elsewhere,
    the stopped worker exits when it wakes, a spectator follows a worker's game through the
    server, and no bot process is left."""
    repo = Repository.open(pg_url)
    bots = [RANDOM, GREEDY] * 5
    t = make_tournament(
        repo, "cluster", bots, names=[f"bot{i}" for i in range(10)], games_per_pairing=1
    )
    repo.update_tournament_options(t.id, run_by="server")
    logs = [tmp_path / f"w{i}.log" for i in (1, 2, 3)]
    workers = [
        start_worker(pg_url, log, heartbeat=HEARTBEAT, stall=STALL, concurrency=2) for log in logs
    ]
    server, address = _server(pg_url, tmp_path)
    watch = ProcessWatch([*workers, server])
    spectator = None
    try:
        spectator = asyncio.run(asyncio.wait_for(_spectate(address, None), 90))
        pool = list(zip(workers, logs, strict=True))
        killed, killed_job, killed_game, _ = _catch_mid_game(pg_url, repo, pool)
        killed[0].kill()
        rest = [w for w in pool if w[0] is not killed[0]]
        stopped, stopped_job, stopped_game, holder = _catch_mid_game(pg_url, repo, rest)
        deadline = time.monotonic() + 60
        while _job_row(pg_url, stopped_job) == ("doing", holder):
            assert time.monotonic() < deadline, "the stopped worker's game was never handed on"
            time.sleep(0.1)
        stopped[0].send_signal(signal.SIGCONT)
        assert stopped[0].wait(30) == 75  # it found its games handed on, and stopped
        survivors = [w for w in rest if w[0] is not stopped[0]]
        deadline = time.monotonic() + 240
        while repo.get_tournament(t.id).status is not TournamentStatus.FINISHED:
            assert time.monotonic() < deadline, "the tournament did not finish"
            assert server.poll() is None
            assert all(p.poll() is None or _stepped_aside(p, log) for p, log in survivors)
            time.sleep(0.25)
    finally:
        stop_workers([*workers, server])
        watch.stop()

    games = repo.list_games(tournament_id=t.id, limit=None)
    counted = [g for g in games if g.counted]
    slots = [(g.pairing_id, g.game_index) for g in counted]
    assert len(slots) == len(set(slots)) == schedule.total_games_planned(t, 10) == 45
    assert all(g.verdict is not Verdict.ABORTED and not g.voided for g in counted)
    stored = {g.uid for g in games}
    # Both cut-off attempts stored nothing; their jobs were played to the end by others.
    assert killed_game not in stored and stopped_game not in stored
    later = [line for log in logs for line in log_lines(log) if line["event"] == "game_recorded"]
    assert {killed_job, stopped_job} <= {int(line["job_id"]) for line in later}
    assert killed[0].returncode == -signal.SIGKILL
    assert all(p.returncode == 0 or _stepped_aside(p, log) for p, log in survivors)
    # The spectator's game was played on a worker and is stored with the moves it saw.
    assert spectator is not None
    played = {line["game_id"] for log in logs for line in log_lines(log) if "game_id" in line}
    assert spectator["uid"] in played and spectator["uid"] in stored
    kinds = [e.WhichOneof("kind") for e in spectator["events"]]
    assert kinds[0] == "start" and set(kinds[1:-1]) == {"move"}
    detail = repo.get_game(spectator["uid"])
    assert len(kinds) - 2 == detail.summary.plies
    assert spectator["events"][-1].end.result == detail.summary.result
    ratings = repo.latest_ratings("ml_elo", tournament_id=t.id)
    assert ratings is not None and ratings.games_counted == 45
    assert watch.alive() == []
    repo.close()
