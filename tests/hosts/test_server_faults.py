"""The server host cut from the database host while casual games and a tournament run, and
the server host killed and started again with its workers and students still up."""

from __future__ import annotations

import time

import httpx
import pytest
from deployment import Deployment, check_tournament, ladder_matches, stored, wait_for
from test_worker_faults import BOTS, _tournament

from referee.storage import Repository
from referee.workers.queue import FINAL

pytestmark = pytest.mark.slow

#: How long the server is cut from the database: three times the 10 s after which a connection
#: to a silent database host fails, so a loaded machine still sees the outage inside the cut.
CUT_S = 30.0
#: The code two students upload (each with a comment of its own: two versions).
UPLOADED_BOT = """
import random

from client_sdk import Agent


class Bot(Agent):
    name = "uploaded"

    def choose_move(self, state, clocks):
        return random.choice(list(state.legal_moves))
"""


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
    games, the workers a tournament and the ladder's games of two uploaded bots: the server
    stays up and says the database is away (/metrics, the web's /healthz), every game finished
    during the cut is stored once the link is back, the tournament finishes, every ladder game
    the server enqueued is played on a worker and stored once, and the ladder equals a fresh
    rebuild."""
    d = deployment
    repo = d.repo()
    d.worker("w1")
    d.worker("w2")
    d.server("--game", "tetress", "--param", "turn_limit=12", *_uploads(d))
    for player, bot in (("carol", "ann"), ("dave", "bo")):
        verdict = d.submit(player, bot, UPLOADED_BOT + f"# {bot}\n")
        assert verdict["status"] == "accepted", verdict
    d.student("alice")
    d.student("bob")
    # Made once the uploads are in (their validation takes a while on a loaded machine), so
    # that it still runs at the cut; the server finds it by its poll.
    tid = _tournament(repo, "cut-db")
    wait_for(lambda: _casual_games(repo) >= 1, 120, "a casual game is stored")
    wait_for(lambda: _ladder_playing(d), 120, "a worker plays a ladder game")
    wait_for(lambda: _tournament_playing(d), 120, "a worker plays a tournament game")
    assert repo.get_tournament(tid).status.value == "running"
    waited = {job_id for job_id, _, _ in d.ladder_jobs()}
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
    time.sleep(max(0.0, CUT_S - (time.monotonic() - cut_at)))  # not a wait: the fault's own length
    during = set(d.finished_here())
    d.hosts.unpartition("server", "db")
    healed = max(job_id for job_id, _, _ in d.ladder_jobs())
    # Bounds for a two-core machine running the whole suite beside this test: 60 s was missed
    # twice there (both passed alone in 60 s); what is asserted is recovery, not its speed.
    wait_for(lambda: httpx.get(web, timeout=5).status_code == 200, 180, "healthz ok again")
    wait_for(lambda: repo.get_tournament(tid).status.value == "finished", 180, "the end")
    for name in ("alice", "bob"):
        d.procs[name].kill()
    wait_for(lambda: _all_finished_stored(d, repo), 180, "every finished game is stored")
    assert during, "no game finished around the cut"
    assert d.procs["server"].poll() is None
    check_tournament(repo, tid, len(BOTS))
    wait_for(
        lambda: any(i > healed and stored(repo, uid) for i, _, uid in d.ladder_jobs()),
        120,
        "the ladder enqueues games again after the cut, and they are stored",
    )
    _check_ladder_jobs(d, repo)
    # The server waited for the ladder jobs it had enqueued before the cut through it, and
    # counted each game stored (the ladder table was rebuilt with it).
    done = wait_for(
        lambda: waited <= (seen := _ladder_jobs_done(d)).keys() and seen,
        60,
        "the server sees the end of each ladder job it waited for through the cut",
    )
    assert {job_id: done[job_id] for job_id in waited} == dict.fromkeys(waited, True)
    wait_for(lambda: ladder_matches(repo), 60, "the ladder equals a fresh rebuild")
    d.no_bot_left()
    repo.close()


def _uploads(d: Deployment) -> list[str]:
    """The server's options for uploads, with their store on the volume the worker hosts
    read too (here a folder every namespace sees; NFS or the like between real hosts)."""
    store = d.tmp / "submissions"
    return [
        *("--submissions", str(store)),
        *("--ladder-games-per-hour", "3600", "--ladder-concurrency", "2"),
    ]


def _ladder_playing(d: Deployment) -> bool:
    """Whether a worker host has started a ladder game it has not recorded yet."""
    for role in ("w1", "w2"):
        lines = [line for line in d.lines(role) if line.get("ladder")]
        done = {line["game_id"] for line in lines if line["event"] == "game_recorded"}
        if any(line["event"] == "game_started" and line["game_id"] not in done for line in lines):
            return True
    return False


def _tournament_playing(d: Deployment) -> bool:
    """Whether a worker host has started a tournament game (one that is no ladder game)."""
    return any(
        line["event"] == "game_started" and not line.get("ladder")
        for role in ("w1", "w2")
        for line in d.lines(role)
    )


def _ladder_jobs_done(d: Deployment) -> dict[int, bool]:
    """The ladder jobs the server saw end, and whether it found each one's game stored."""
    return {
        int(line["job_id"]): bool(line["stored"])
        for line in d.lines("server")
        if line["event"] == "ladder_job_done"
    }


def _check_ladder_jobs(d: Deployment, repo: Repository) -> None:
    """Every ladder job enqueued so far ends with its game stored, once, by a worker host."""
    mark = max(job_id for job_id, _, _ in d.ladder_jobs())
    wait_for(
        lambda: all(s in FINAL for i, s, _ in d.ladder_jobs() if i <= mark),
        120,
        "every ladder job enqueued before the check ends",
    )
    jobs = [(i, s, uid) for i, s, uid in d.ladder_jobs() if i <= mark]
    uids = [uid for _, _, uid in jobs]
    assert len(uids) == len(set(uids)), "two jobs for one ladder game"
    lost = [(i, s, uid) for i, s, uid in jobs if not stored(repo, uid)]
    assert not lost, f"ladder games lost: {lost}"
    games = repo.list_games(limit=None)
    assert len({g.uid for g in games}) == len(games)
    recorded = [
        line["game_id"]
        for role in ("w1", "w2")
        for line in d.lines(role)
        if line.get("ladder") and line["event"] == "game_recorded"
    ]
    assert sorted(recorded) == sorted(set(recorded)), "a ladder game recorded twice"
    assert set(uids) <= set(recorded), "a ladder game not played on a worker host"
    assert len(jobs) >= 2, jobs


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
