"""The validation queue's rule, tested directly: order, replacement, one at a time per team,
fair share, places and the wait estimate."""

from __future__ import annotations

from referee.submissions.fairqueue import (
    Waiting,
    admit,
    estimate_s,
    next_up,
    order,
    place_of,
)


def _queue(*uploads: tuple[str, int, float]) -> list[Waiting]:
    waiting: list[Waiting] = []
    for team, sid, at in uploads:
        waiting, _ = admit(waiting, Waiting(team, sid, at))
    return waiting


def test_teams_are_served_in_order_of_their_waiting_upload() -> None:
    """Three teams waiting are served oldest upload first, ties by submission id."""
    waiting = _queue(("carol", 3, 30.0), ("alice", 1, 10.0), ("bob", 2, 10.0))
    assert [w.team for w in order(waiting)] == ["alice", "bob", "carol"]
    assert next_up(waiting, ()) == Waiting("alice", 1, 10.0)


def test_a_newer_upload_replaces_the_teams_waiting_one() -> None:
    """A team's second upload replaces its first while it waits; other teams are untouched."""
    waiting = _queue(("alice", 1, 10.0), ("bob", 2, 20.0))
    waiting, replaced = admit(waiting, Waiting("alice", 3, 30.0))
    assert replaced == Waiting("alice", 1, 10.0)
    assert sorted(w.submission_id for w in waiting) == [2, 3]
    _, none = admit(waiting, Waiting("carol", 4, 40.0))
    assert none is None


def test_uploading_again_goes_behind_teams_already_waiting() -> None:
    """A replacing upload waits from its own upload time: it never jumps over another team."""
    waiting = _queue(("alice", 1, 10.0), ("bob", 2, 20.0), ("alice", 3, 30.0))
    assert [w.submission_id for w in order(waiting)] == [2, 3]


def test_one_validation_at_a_time_per_team() -> None:
    """A team whose validation runs is passed over until it ends, even if its upload is oldest."""
    waiting = _queue(("alice", 5, 10.0), ("bob", 6, 20.0))
    assert next_up(waiting, {"alice"}) == Waiting("bob", 6, 20.0)
    assert next_up(waiting, {"alice", "bob"}) is None
    assert [w.team for w in order(waiting, {"alice"})] == ["bob", "alice"]


def test_fair_share_a_busy_team_cannot_crowd_out_another() -> None:
    """Alice uploads ten times during her validation, Bob once: serving the queue alternates
    teams (Alice's newest only, after Bob), never two of Alice's in a row while Bob waits."""
    waiting: list[Waiting] = []
    served: list[int] = []
    running: set[str] = set()
    waiting, _ = admit(waiting, Waiting("alice", 1, 0.0))
    first = next_up(waiting, running)
    assert first is not None
    waiting.remove(first)
    served.append(first.submission_id)
    running.add(first.team)
    for i in range(10):
        waiting, _ = admit(waiting, Waiting("alice", 10 + i, 1.0 + i))
        if i == 3:
            waiting, _ = admit(waiting, Waiting("bob", 99, 4.5))
    running.clear()  # alice's first validation ended
    while (chosen := next_up(waiting, running)) is not None:
        waiting.remove(chosen)
        served.append(chosen.submission_id)
    assert served == [1, 99, 19]


def test_places_and_the_wait_estimate_come_from_measured_times() -> None:
    """Places count from 1 in serving order; the estimate is the median measured validation
    time per slot for each one ahead (running ones half done), none before any measurement."""
    waiting = _queue(("alice", 1, 1.0), ("bob", 2, 2.0), ("carol", 3, 3.0))
    assert [place_of(waiting, (), s) for s in (1, 2, 3, 42)] == [1, 2, 3, 0]
    assert estimate_s(3, [], slots=1, running=0) is None
    assert estimate_s(1, [10.0, 30.0, 20.0], slots=1, running=0) == 0.0
    assert estimate_s(3, [10.0, 30.0, 20.0], slots=1, running=0) == 40.0
    assert estimate_s(3, [10.0, 30.0, 20.0], slots=2, running=2) == 30.0
