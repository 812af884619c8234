"""The ladder's scheduling rule, tested directly: new versions first within the stated bound,
games shared per team whatever its number of versions, stale versions never chosen."""

from __future__ import annotations

import math
import random
from collections import Counter

from referee.hosting.ladder_schedule import Entrant, Tally, next_pair


def _play(
    entrants: list[Entrant], tally: Tally, games: int, seed: int = 1
) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    played = []
    for _ in range(games):
        pair = next_pair(entrants, tally, rng)
        assert pair is not None
        tally.count(*pair)
        played.append((pair[0].version_id, pair[1].version_id))
    return played


def test_fewer_than_two_teams_play_nothing() -> None:
    """One team's two bots never play each other on the ladder: a game needs two teams."""
    solo = [Entrant(1, "alice", 1.0), Entrant(2, "alice", 2.0)]
    assert next_pair(solo, Tally.empty()) is None
    assert next_pair([], Tally.empty()) is None


def test_new_versions_play_first_within_the_bound() -> None:
    """Ten teams have played 50 games; seven new versions are accepted: the k-th accepted
    (from 0) plays in the first ceil((k+1)/2) games, and new versions meet each other."""
    old = [Entrant(i, f"team{i}", float(i)) for i in range(10)]
    tally = Tally.empty()
    _play(old, tally, 50)
    new = [Entrant(100 + k, f"team{k}", 100.0 + k) for k in range(7)]
    # The new versions replace their teams' old ones (the caller passes playing versions).
    playing = [e for e in old if e.team not in {n.team for n in new}] + new
    played = _play(playing, tally, 4)
    for k, entrant in enumerate(new):
        first = next(i for i, game in enumerate(played) if entrant.version_id in game)
        assert first < math.ceil((k + 1) / 2), (k, played)
    assert played[0] in ((100, 101), (101, 100))


def test_a_team_with_many_bots_gets_no_larger_share() -> None:
    """Alice has five bots, Bob and Carol one each: over 300 games each team plays about as
    many games as the others (within two), and Alice's bots share hers."""
    entrants = [Entrant(i, "alice", float(i)) for i in range(5)]
    entrants += [Entrant(10, "bob", 10.0), Entrant(11, "carol", 11.0)]
    tally = Tally.empty()
    _play(entrants, tally, 300)
    shares = tally.teams
    assert max(shares.values()) - min(shares.values()) <= 2, shares
    alice = [tally.versions[i] for i in range(5)]
    assert sum(alice) == shares["alice"] and max(alice) - min(alice) <= 1


def test_stale_versions_are_never_scheduled() -> None:
    """Once a team's newer version replaces its old one in the entrants, the old one is in
    no further game, and the new one plays at once."""
    entrants = [Entrant(1, "alice", 1.0), Entrant(2, "bob", 2.0), Entrant(3, "carol", 3.0)]
    tally = Tally.empty()
    _play(entrants, tally, 9)
    entrants = [Entrant(4, "alice", 4.0), entrants[1], entrants[2]]
    later = _play(entrants, tally, 30)
    assert all(1 not in game for game in later)
    assert 4 in later[0]
    counts = Counter(v for game in later for v in game)
    assert counts[4] >= 15


def test_two_versions_take_turns_at_each_side() -> None:
    """Two teams' versions meeting again and again change sides every game, whichever of the
    two the schedule picks first (ties between teams are broken at random)."""
    pair = [Entrant(1, "alice", 1.0), Entrant(2, "bob", 2.0)]
    for seed in range(20):
        played = _play(pair, Tally.empty(), 6, seed)
        assert played == [(1, 2), (2, 1)] * 3, (seed, played)
