"""The server host cut from the database host while casual games and a tournament run, and
the server host killed and started again with its workers and students still up."""

from __future__ import annotations

import time

import httpx
import pytest
from deployment import Deployment, check_tournament, ladder_matches, stored, wait_for
from test_worker_faults import BOTS, _tournament

from referee.storage import Repository

pytestmark = pytest.mark.slow

#: How long the server is cut from the database: three times the 10 s after which a connection
#: to a silent database host fails, so a loaded machine still sees the outage inside the cut.
CUT_S = 30.0


def _casual_games(repo: Repository) -> int:
    return sum(1 for g in repo.list_games(limit=None) if g.tournament_id is None)


def _class_running(d: Deployment) -> Repository:
    """Two worker hosts, the server (short casual games), two students' bots connected."""
    d.worker("w1")
    d.worker("w2")
    d.server("--param", "turn_limit=12")
    d.student("alice")
    d.student("bob")
    repo = d.repo()
    wait_for(lambda: _casual_games(repo) >= 1, 120, "a casual game is stored")
    return repo


def _all_finished_stored(d: Deployment, repo: Repository) -> bool:
    return all(stored(repo, uid) for uid in d.finished_here())


def test_server_cut_from_the_database(deployment: Deployment) -> None:
    """The server's packets to the database host dropped for CUT_S while students play casual
    games and the workers a tournament: the server stays up and says the database is away
    (/metrics, the web's /healthz), every game finished during the cut is stored once the link
    is back, the tournament finishes and the ladder equals a fresh rebuild."""
    d = deployment
    repo = d.repo()
    tid = _tournament(repo, "cut-db")
    repo = _class_running(d)
    d.hosts.partition("server", "db")
    cut_at = time.monotonic()
    web = f"http://{d.hosts.addr('server')}:8080/healthz"
    wait_for(
        lambda: any(v == 0 for v in d.metric("server", "tetromino_database_up").values()),
        CUT_S,
        "the server's metrics say the database is away",
    )
    health = httpx.get(web, timeout=5)
    assert health.status_code == 503 and "database" in health.text
    time.sleep(max(0.0, CUT_S - (time.monotonic() - cut_at)))
    during = set(d.finished_here())
    d.hosts.unpartition("server", "db")
    wait_for(lambda: httpx.get(web, timeout=5).status_code == 200, 60, "healthz ok again")
    wait_for(lambda: repo.get_tournament(tid).status.value == "finished", 180, "the end")
    for name in ("alice", "bob"):
        d.procs[name].kill()
    wait_for(lambda: _all_finished_stored(d, repo), 60, "every finished game is stored")
    assert during, "no game finished around the cut"
    assert d.procs["server"].poll() is None
    check_tournament(repo, tid, len(BOTS))
    wait_for(lambda: ladder_matches(repo), 60, "the ladder equals a fresh rebuild")
    d.no_bot_left()
    repo.close()


def test_server_host_killed_and_restarted(deployment: Deployment) -> None:
    """Every process of the server host SIGKILLed mid-tournament with workers and students
    up, then the server started again: the students' bots come back and play on, the
    tournament resumes and finishes, nothing is stored twice, the ladder equals a rebuild."""
    d = deployment
    repo = d.repo()
    tid = _tournament(repo, "kill-server")
    repo = _class_running(d)
    before = _casual_games(repo)
    d.hosts.kill("server")
    d.server("--param", "turn_limit=12")
    wait_for(lambda: _casual_games(repo) > before + 1, 120, "the students play on")
    wait_for(lambda: repo.get_tournament(tid).status.value == "finished", 180, "the end")
    for name in ("alice", "bob"):
        assert d.procs[name].poll() is None, d.log(name).read_text()[-2000:]
        d.procs[name].kill()
    check_tournament(repo, tid, len(BOTS))
    wait_for(lambda: ladder_matches(repo), 60, "the ladder equals a fresh rebuild")
    d.no_bot_left()
    repo.close()
