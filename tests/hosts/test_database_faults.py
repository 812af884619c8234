"""PostgreSQL restarted on its host in the middle of a tournament the server hosts on two
worker hosts."""

from __future__ import annotations

import pytest
from deployment import Deployment, check_tournament, wait_for
from test_worker_faults import BOTS, _playing, _tournament

pytestmark = pytest.mark.slow


def test_postgres_restarted_mid_tournament(deployment: Deployment) -> None:
    """PostgreSQL stopped (immediate: a crash) and started again while workers play: the
    server and the workers ride it out (a worker only ever leaves by the lease rule), the
    tournament finishes, every game stored once."""
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
        # A worker rides the restart out; the one thing it may do besides is what any worker
        # whose heartbeats stalled past the lease does (a busy CI machine can starve it for
        # the test's 6 s lease): find its game handed on, say so and exit 75 for its
        # supervisor. What must hold either way is checked below: every game stored once.
        code, log = d.procs[role].poll(), d.log(role).read_text()
        assert code is None or (code == 75 and '"lease_lost"' in log), f"{role} died: {log[-2000:]}"
    check_tournament(repo, tid, len(BOTS))
    d.no_bot_left()
    repo.close()
