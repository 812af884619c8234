"""A class deployment on the hosts of deploy/netns_hosts.py: a database of its own on the
database host, the server and workers started on theirs, and the checks every fault ends with."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from netns_hosts import Hosts, Postgres

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workers"))

from workers_helpers import RANDOM, REFEREE, ProcessWatch, log_lines

from referee.storage import Repository, TournamentStatus
from referee.tournament import schedule
from referee.tournament.ladder import compute_ladder
from referee.tournament.standings import standings

#: The job lease: a worker silent this long is taken for dead (heartbeat every 0.5 s).
STALL_S = 6.0
HEARTBEAT_S = 0.5
HOST_ROLES = ("server", "w1", "w2", "student")
#: An upload's first check and validation games on a loaded machine (a bound, not a timing).
SUBMIT_S = 240.0


def wait_for(check: Callable[[], Any], within_s: float, what: str, every_s: float = 0.2) -> Any:
    """Poll ``check`` until it returns something true; fail saying ``what`` after the deadline."""
    deadline = time.monotonic() + within_s
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"not within {within_s:.0f} s: {what}"
        time.sleep(every_s)


@dataclass
class Deployment:
    hosts: Hosts
    pg: Postgres
    tmp: Path
    url: str
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    watch: ProcessWatch = field(default_factory=lambda: ProcessWatch([]))

    @classmethod
    def fresh(cls, hosts: Hosts, pg: Postgres, tmp: Path) -> Deployment:
        name = f"t_{secrets.token_hex(5)}"
        with psycopg.connect(_libpq(pg.url), autocommit=True, connect_timeout=10) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return cls(hosts, pg, tmp, pg.url.rsplit("/", 1)[0] + f"/{name}")

    def repo(self) -> Repository:
        return Repository.open(self.url)

    def log(self, role: str) -> Path:
        return self.tmp / f"{role}.log"

    def lines(self, role: str) -> list[dict[str, Any]]:
        return log_lines(self.log(role)) if self.log(role).exists() else []

    def _start(self, role: str, argv: list[str]) -> subprocess.Popen[bytes]:
        proc = self.hosts.run(role, [*REFEREE, *argv], self.log(role))
        self.procs[role] = proc
        self.watch.add(proc)
        return proc

    def server(self, *extra: str, reconnect_window: float = 3.0) -> str:
        """``referee serve`` (web, metrics) on the server host; its gRPC address."""
        addr = self.hosts.addr("server")
        address_file = self.tmp / "address"
        address_file.unlink(missing_ok=True)
        argv = ["serve", "--db", self.url, "--listen", f"{addr}:50051", "--web", f"{addr}:8080"]
        argv += ["--metrics-listen", f"{addr}:9100", "--address-file", str(address_file)]
        argv += ["--log-format", "json", "--reconnect-window", str(reconnect_window)]
        argv += ["--shutdown-grace", "2", *extra]
        proc = self._start("server", argv)
        wait_for(
            lambda: (proc.poll() is None and address_file.exists()) or proc.poll() is not None,
            90,
            "the server listens",
        )
        assert proc.poll() is None, self.log("server").read_text()[-3000:]
        return f"{addr}:50051"

    def worker(self, role: str) -> subprocess.Popen[bytes]:
        """``referee worker`` on a worker host, with a short lease."""
        addr = self.hosts.addr(role)
        argv = ["worker", "--db", self.url, "--concurrency", "2", "--name", role]
        argv += ["--heartbeat", str(HEARTBEAT_S), "--stall-timeout", str(STALL_S)]
        argv += ["--metrics-listen", f"{addr}:9100", "--log-format", "json"]
        before = self._started(role)
        proc = self._start(role, argv)
        wait_for(
            lambda: self._started(role) > before or proc.poll() is not None,
            60,
            f"{role} starts",
        )
        assert proc.poll() is None, self.log(role).read_text()[-3000:]
        return proc

    def _account(self, name: str) -> Path:
        """A new player ``name``; the file holding its token."""
        repo = self.repo()
        repo.create_player(name)
        token = self.tmp / f"{name}.token"
        token.write_text(repo.issue_token(name))
        repo.close()
        return token

    def _started(self, role: str) -> int:
        """How many workers started in ``role``'s log (a restarted one writes on)."""
        return sum(line["event"] == "worker_started" for line in self.lines(role))

    def student(self, name: str, bot: str = RANDOM) -> subprocess.Popen[bytes]:
        """A student's bot on the student host, connected to the server by its address."""
        token = self._account(name)
        server = f"{self.hosts.addr('server')}:50051"
        argv = [sys.executable, "-m", "client_sdk", "--server", server, "--token-file", str(token)]
        proc = self.hosts.run("student", [*argv, "--name", name, bot], self.log(name))
        self.procs[name] = proc
        return proc

    def submit(self, player: str, bot: str, code: str) -> dict[str, Any]:
        """``python -m client_sdk submit`` on the student host: the module ``code`` uploaded by
        a new player ``player`` as ``bot`` to the server's Submissions service, waiting for
        its validation; the command's JSON verdict."""
        token = self._account(player)
        module = self.tmp / f"{bot}.py"
        module.write_text(code)
        server = f"{self.hosts.addr('server')}:50051"
        argv = [sys.executable, "-m", "client_sdk", "submit", "--server", server]
        argv += ["--token-file", str(token), "--json", "--name", bot, str(module)]
        log = self.log(f"submit-{bot}")
        proc = self.hosts.run("student", argv, log)
        proc.wait(SUBMIT_S)
        verdict: dict[str, Any] = json.loads(log.read_text().strip().splitlines()[-1])
        return verdict

    def finished_here(self, role: str = "server") -> set[str]:
        """The games ``role`` refereed to an end with a result (its log's game_over lines)."""
        return {
            str(line["game_id"])
            for line in self.lines(role)
            if line["event"] == "game_over" and line.get("result", "*") != "*"
        }

    def metric(self, role: str, name: str) -> dict[str, float]:
        """``name``'s samples on ``role``'s /metrics (labels text -> value); {} if unreachable."""
        try:
            text = httpx.get(f"http://{self.hosts.addr(role)}:9100/metrics", timeout=5).text
        except httpx.HTTPError:
            return {}
        found = {}
        for line in text.splitlines():
            if line.startswith(name):
                key, _, value = line.rpartition(" ")
                found[key[len(name) :]] = float(value)
        return found

    def tear_down(self) -> None:
        """Every link up, every process on the server, worker and student hosts killed,
        PostgreSQL running, the database dropped."""
        self.watch.stop()
        for role in HOST_ROLES:
            self.hosts.heal(role)
            self.hosts.unpartition(role, "db")
            self.hosts.kill(role)
        if not self.pg.ready():
            self.pg.start()
        name = self.url.rsplit("/", 1)[1]
        with psycopg.connect(_libpq(self.pg.url), autocommit=True, connect_timeout=10) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def ladder_jobs(self) -> list[tuple[int, str, str]]:
        """The jobs of the ladder of submitted bots in the queue: (job id, status, game uid)."""
        with psycopg.connect(_libpq(self.url), connect_timeout=10) as conn:
            rows = conn.execute(
                "SELECT id, status::text, args->>'ladder_uid' FROM procrastinate_jobs "
                "WHERE args ? 'ladder_uid' ORDER BY id"
            ).fetchall()
        return [(int(i), str(status), str(uid)) for i, status, uid in rows]

    def no_bot_left(self) -> None:
        """No process a worker or the server started (bots, sandboxes) outlives its game."""
        roots = {p.pid for p in self.procs.values()}
        wait_for(
            lambda: not [pid for pid in self.watch.alive() if pid not in roots],
            30,
            "every bot process ends",
        )


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


def stored(repo: Repository, uid: str) -> bool:
    """Whether the game ``uid`` is stored."""
    return repo.has_game(uid)


def check_tournament(repo: Repository, tournament_id: int, entrants: int) -> dict[str, int]:
    """No game lost, none counted twice, the stored tables equal a fresh recomputation:
    (counted, voided) games."""
    t = repo.get_tournament(tournament_id)
    assert t.status is TournamentStatus.FINISHED
    games = repo.list_games(tournament_id=tournament_id, limit=None)
    uids = [g.uid for g in games]
    assert len(uids) == len(set(uids))
    slots = [(g.pairing_id, g.game_index) for g in games if g.counted]
    assert len(slots) == len(set(slots)), "a slot stored twice"
    assert len(slots) == schedule.total_games_planned(t, entrants), "a game lost"
    fresh = standings(repo, tournament_id)
    stored = repo.latest_ratings("ml_elo", tournament_id=tournament_id)
    assert stored is not None and stored.games_counted == fresh.board.fit.games
    again = {fresh.versions[r.player].id: r.elo for r in fresh.board.rows if r.elo is not None}
    assert {e.bot_version_id: e.rating for e in stored.rows} == pytest.approx(again)
    return {
        "counted": sum(g.counted for g in games),
        "voided": sum(g.voided for g in games),
    }


def ladder_matches(repo: Repository) -> bool:
    """Whether the newest stored ladder equals one rebuilt from the stored games."""
    fresh = compute_ladder(repo)
    stored = repo.latest_ratings("openskill", ladder="main")
    if stored is None:
        return fresh.games == 0
    again = {fresh.ids[r.player]: r.ordinal for r in fresh.rows if r.player in fresh.ids}
    mine = {e.bot_version_id: e.rating for e in stored.rows}
    return bool(stored.games_counted == fresh.games and mine == pytest.approx(again))
