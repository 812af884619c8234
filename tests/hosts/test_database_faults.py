"""PostgreSQL restarted on its host in the middle of a tournament the server hosts on two
worker hosts."""

from __future__ import annotations

import pytest
from deployment import Deployment, check_tournament, wait_for
from test_worker_faults import BOTS, _playing, _tournament

pytestmark = pytest.mark.slow


def test_postgres_restarted_mid_tournament(deployment: Deployment) -> None:
    """PostgreSQL stopped (immediate: a crash) and started again while workers play: the
    server and both workers ride it out (each sends its heartbeat again within a beat of the
    return, inside the lease the others give after an outage, so none is taken for dead and
    none leaves), the tournament finishes, every game stored once."""
    d = deployment
    repo = d.repo()
    tid = _tournament(repo, "restart")
    d.worker("w1")
    d.worker("w2")
    d.server()
    wait_for(lambda: _playing(d, "w1") or _playing(d, "w2"), 120, "a game is played")
    d.pg.stop("immediate")
    d.pg.start()
    wait_for(lambda: repo.get_tournament(tid).status.value == "finished", 180, "the end")
    assert d.procs["server"].poll() is None, f"server died: {d.log('server').read_text()[-2000:]}"
    for role in ("w1", "w2"):
        log = d.log(role).read_text()
        assert d.procs[role].poll() is None, f"{role} left: {log[-2000:]}"
        handed = [line for line in d.lines(role) if line["event"] in ("game_stalled", "lease_lost")]
        assert not handed, f"a restart made {role} hand a game on or lose one: {handed}"
    check_tournament(repo, tid, len(BOTS))
    d.no_bot_left()
    repo.close()
