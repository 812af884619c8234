"""A student host's link cut for less, then for more, than the reconnect window while its
bots play casual games on the server."""

from __future__ import annotations

import time

import pytest
from deployment import Deployment, ladder_matches, stored, wait_for

from engine.adjudication.verdicts import Verdict
from referee.storage import Repository

pytestmark = pytest.mark.slow

#: Long beside a short cut's recovery even at a loaded machine's pace (with 10 s, a 1.5 s cut
#: was once seen to end in a disconnect while the whole suite ran beside other work).
WINDOW_S = 20.0
#: The server pings a silent connection after this long and drops it 1 s later.
KEEPALIVE_S = 2.0
SHORT_CUT_S = 1.5
#: Past the keepalive's drop and the whole window after it.
LONG_CUT_S = KEEPALIVE_S * 1.5 + WINDOW_S + 4.0


def _casual(repo: Repository) -> list[tuple[str, Verdict]]:
    return [(g.uid, g.verdict) for g in repo.list_games(limit=None) if g.tournament_id is None]


def _cut_for(d: Deployment, seconds: float) -> None:
    d.hosts.cut("student")
    time.sleep(seconds)  # not a wait: the fault's own length
    d.hosts.heal("student")


def test_student_link_cut_shorter_then_longer_than_the_reconnect_window(
    deployment: Deployment,
) -> None:
    """A cut shorter than the window costs no game (the bots resume theirs); a longer one
    ends the game cut off as a disconnect, stored once; both bots come back and play on,
    every game the server finished is stored and the ladder equals a fresh rebuild."""
    d = deployment
    d.server("--param", "turn_limit=30", "--keepalive", str(KEEPALIVE_S), reconnect_window=WINDOW_S)
    d.student("alice")
    d.student("bob")
    repo = d.repo()
    wait_for(lambda: len(_casual(repo)) >= 2, 120, "casual games are stored")
    _cut_for(d, SHORT_CUT_S)
    after_short = len(_casual(repo))
    wait_for(lambda: len(_casual(repo)) >= after_short + 2, 120, "play goes on")
    assert all(v is not Verdict.DISCONNECT for _, v in _casual(repo))
    _cut_for(d, LONG_CUT_S)
    wait_for(
        lambda: any(v is Verdict.DISCONNECT for _, v in _casual(repo)),
        60,
        "the game cut off is stored as a disconnect",
    )
    after_long = len(_casual(repo))
    wait_for(lambda: len(_casual(repo)) >= after_long + 2, 120, "the bots came back")
    for name in ("alice", "bob"):
        assert d.procs[name].poll() is None, d.log(name).read_text()[-2000:]
        d.procs[name].kill()
    uids = [uid for uid, _ in _casual(repo)]
    assert len(uids) == len(set(uids))
    wait_for(lambda: all(stored(repo, uid) for uid in d.finished_here()), 60, "all stored")
    wait_for(lambda: ladder_matches(repo), 60, "the ladder equals a fresh rebuild")
    d.no_bot_left()
    repo.close()
