"""PostgreSQL restarted on its host in the middle of a tournament the server hosts on two
worker hosts."""

from __future__ import annotations

import pytest
from deployment import Deployment, check_tournament, wait_for
from test_worker_faults import BOTS, _playing, _tournament

pytestmark = pytest.mark.slow


def test_postgres_restarted_mid_tournament(deployment: Deployment) -> None:
    """PostgreSQL stopped (immediate: a crash) and started again while workers play: the
    server and the workers ride it out, the tournament finishes, every game stored once."""
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
    for role in ("server", "w1", "w2"):
        assert d.procs[role].poll() is None, f"{role} died: {d.log(role).read_text()[-2000:]}"
    check_tournament(repo, tid, len(BOTS))
    d.no_bot_left()
    repo.close()
