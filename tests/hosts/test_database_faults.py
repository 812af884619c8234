"""PostgreSQL restarted on its host in the middle of a tournament the server hosts on two
worker hosts."""

from __future__ import annotations

import pytest
from deployment import Deployment, check_tournament, wait_for
from test_worker_faults import BOTS, _playing, _tournament

pytestmark = pytest.mark.slow


def _supervise(d: Deployment, restarts: list[str]) -> None:
    """What the workers' supervisor does (systemd's Restart=, a Kubernetes Deployment): a
    worker that left by the lease rule (exit 75 after its own ``lease_lost`` line) is started
    again; a worker that left any other way fails the test."""
    for role in ("w1", "w2"):
        code = d.procs[role].poll()
        if code is None:
            continue
        log = d.log(role).read_text()
        left = log.count('"lease_lost"') > restarts.count(role)
        assert code == 75 and left, f"{role} died (exit {code}): {log[-2000:]}"
        restarts.append(role)
        d.worker(role)


def test_postgres_restarted_mid_tournament(deployment: Deployment) -> None:
    """PostgreSQL stopped (immediate: a crash) and started again while workers play: the
    server rides it out, the workers too (each sends its heartbeat again within a beat of the
    return, tests/workers/test_worker_outages.py), the tournament finishes with every game
    stored once and both workers running. A worker starved past its lease by a loaded machine
    leaves by the lease rule (exit 75) and is started again as its supervisor would; one that
    leaves any other way, or is not back, fails the test."""
    d = deployment
    repo = d.repo()
    tid = _tournament(repo, "restart")
    d.worker("w1")
    d.worker("w2")
    d.server()
    wait_for(lambda: _playing(d, "w1") or _playing(d, "w2"), 120, "a game is played")
    d.pg.stop("immediate")
    d.pg.start()
    restarts: list[str] = []

    def finished() -> bool:
        _supervise(d, restarts)
        return repo.get_tournament(tid).status.value == "finished"

    wait_for(finished, 180, "the end")
    assert d.procs["server"].poll() is None, f"server died: {d.log('server').read_text()[-2000:]}"
    _supervise(d, restarts)
    for role in ("w1", "w2"):
        assert d.procs[role].poll() is None, d.log(role).read_text()[-2000:]
    check_tournament(repo, tid, len(BOTS))
    d.no_bot_left()
    repo.close()
