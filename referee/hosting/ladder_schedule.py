"""Who plays the ladder's next game, as a pure function of the entrants and the games so far.

* **Stale versions never play**: the entrants are each submitted bot's latest accepted
  version (the caller's list); a version its team superseded is not one.
* **New versions first**: a version with no game yet in this run plays the next game, the
  earliest accepted first, and its opponent is another new version when one is waiting (of
  another team). With ``k`` new versions accepted before it, a new version's first game is
  among the next ``ceil((k + 1) / 2)`` games the ladder starts.
* **Per team, not per version**: otherwise the team with the fewest games so far plays (its
  bot with the fewest), against the least-played team's bot it met least. A team's games
  count once whatever the number of its bots or versions, so a team with many cannot take a
  larger share of the ladder's games (its CPU) than a team with one.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Entrant:
    """A bot's playing version: its id, its team (the owner) and when it was accepted
    (any increasing number: the submission id does)."""

    version_id: int
    team: str
    accepted: float


@dataclass(slots=True)
class Tally:
    """Games started in this run: per team, per version, per pair of versions."""

    teams: Counter[str]
    versions: Counter[int]
    met: Counter[frozenset[int]]

    @classmethod
    def empty(cls) -> Tally:
        return cls(Counter(), Counter(), Counter())

    def count(self, a: Entrant, b: Entrant) -> None:
        for e in (a, b):
            self.teams[e.team] += 1
            self.versions[e.version_id] += 1
        self.met[frozenset((a.version_id, b.version_id))] += 1


def next_pair(
    entrants: Sequence[Entrant], tally: Tally, rng: random.Random | None = None
) -> tuple[Entrant, Entrant] | None:
    """The next game's two entrants (seats in order; sides alternate by how often they met),
    or ``None`` when fewer than two teams have a playing version."""
    rng = rng or random.Random()
    if len({e.team for e in entrants}) < 2:
        return None
    new = sorted((e for e in entrants if tally.versions[e.version_id] == 0), key=_age)
    first = new[0] if new else _least_played(entrants, tally, rng)
    others = [e for e in entrants if e.team != first.team]
    fresh = [e for e in new if e.team != first.team]
    second = fresh[0] if fresh else _opponent(first, others, tally, rng)
    # Sides alternate between the same two versions whichever of them was picked first: the
    # lower version id is RED at their even meetings, BLUE at their odd ones.
    low, high = sorted((first, second), key=lambda e: e.version_id)
    if tally.met[frozenset((low.version_id, high.version_id))] % 2:
        return high, low
    return low, high


def _age(e: Entrant) -> tuple[float, int]:
    return e.accepted, e.version_id


def _least_played(entrants: Sequence[Entrant], tally: Tally, rng: random.Random) -> Entrant:
    """The least-played team's least-played version (ties at random)."""
    fewest = min(tally.teams[e.team] for e in entrants)
    teams = sorted({e.team for e in entrants if tally.teams[e.team] == fewest})
    team = rng.choice(teams)
    mine = [e for e in entrants if e.team == team]
    low = min(tally.versions[e.version_id] for e in mine)
    return rng.choice([e for e in mine if tally.versions[e.version_id] == low])


def _opponent(
    first: Entrant, others: Sequence[Entrant], tally: Tally, rng: random.Random
) -> Entrant:
    """Among the least-played teams' versions, the one ``first`` met least (ties at random)."""
    fewest = min(tally.teams[e.team] for e in others)
    pool = [e for e in others if tally.teams[e.team] == fewest]
    least = min(tally.met[frozenset((first.version_id, e.version_id))] for e in pool)
    return rng.choice(
        [e for e in pool if tally.met[frozenset((first.version_id, e.version_id))] == least]
    )
