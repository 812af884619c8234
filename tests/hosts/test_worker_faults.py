"""A worker host cut from the network past its job lease, and a worker host killed, while the
server's tournament plays on the two worker hosts."""

from __future__ import annotations

import pytest
from deployment import STALL_S, Deployment, check_tournament, stored, wait_for
from workers_helpers import GREEDY, RANDOM, make_tournament

from referee.storage import Repository

pytestmark = pytest.mark.slow

BOTS = [RANDOM, GREEDY, RANDOM, GREEDY]


def _tournament(repo: Repository, name: str) -> int:
    t = make_tournament(
        repo, name, BOTS, names=[f"b{i}" for i in range(len(BOTS))], games_per_pairing=2
    )
    repo.update_tournament_options(t.id, run_by="server")
    return t.id


def _playing(d: Deployment, role: str) -> dict[str, object] | None:
    """A game ``role`` has started and not recorded yet, from its log."""
    lines = d.lines(role)
    done = {line["game_id"] for line in lines if line["event"] == "game_recorded"}
    started = [
        line for line in lines if line["event"] == "game_started" and line["game_id"] not in done
    ]
    return started[-1] if started else None


def _cut_mid_game(d: Deployment, repo: Repository, role: str) -> dict[str, object]:
    """Cut ``role``'s link while it plays a game that is not stored (checked once cut, so it
    stays so); the game's log line."""
    for _ in range(20):
        game = wait_for(lambda: _playing(d, role), 120, f"{role} plays a game")
        d.hosts.cut(role)
        if not stored(repo, str(game["game_id"])):
            return game
        d.hosts.heal(role)
    raise AssertionError(f"{role}'s games all ended before its link could be cut")


def test_a_worker_cut_past_its_lease_is_replaced_and_its_late_result_refused(
    deployment: Deployment,
) -> None:
    """A worker host whose link drops mid-game for longer than the lease: its game is played
    again on the other worker host; when the link returns the old worker stores nothing (its
    lease is gone), every game is stored once and the tables match the stored games."""
    d = deployment
    repo = d.repo()
    tid = _tournament(repo, "cut")
    d.worker("w1")
    d.server()
    game = _cut_mid_game(d, repo, "w1")
    d.worker("w2")
    # The other worker finds w1 silent past the lease and plays its game again.
    wait_for(
        lambda: any(
            line["event"] == "game_recorded" and line["job_id"] == game["job_id"]
            for line in d.lines("w2")
        ),
        STALL_S + 120,
        "w2 replays w1's game",
    )
    d.hosts.heal("w1")
    wait_for(lambda: repo.get_tournament(tid).status.value == "finished", 180, "the end")
    # Back on the network, w1 learns its lease is gone and stores nothing of its old game.
    wait_for(lambda: d.procs["w1"].poll() is not None, 60, "w1 gives its lost games up")
    assert d.procs["w1"].returncode == 75
    assert not stored(repo, str(game["game_id"]))
    check_tournament(repo, tid, len(BOTS))
    d.no_bot_left()
    repo.close()


def test_a_worker_host_killed_mid_game_is_replaced(deployment: Deployment) -> None:
    """Every process of a worker host SIGKILLed mid-game: the other worker host plays the game
    again, the tournament finishes with every game stored once and no bot process is left."""
    d = deployment
    repo = d.repo()
    tid = _tournament(repo, "kill")
    d.worker("w1")
    d.worker("w2")
    d.server()
    game = _cut_mid_game(d, repo, "w1")
    d.hosts.kill("w1")
    d.hosts.heal("w1")
    wait_for(lambda: repo.get_tournament(tid).status.value == "finished", 180, "the end")
    assert not stored(repo, str(game["game_id"]))
    assert any(
        line["event"] == "game_recorded" and line["job_id"] == game["job_id"]
        for line in d.lines("w2")
    )
    check_tournament(repo, tid, len(BOTS))
    d.no_bot_left()
    repo.close()
