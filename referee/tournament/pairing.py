"""Who plays whom: round robin, Swiss (Dutch-style) and gauntlet pairings.

Pure functions on player ids. A :class:`Pairing` is always played as a game pair with the
sides swapped (:meth:`Pairing.games`), so every pairing gives both players each seat once;
"colour" below means who takes the first seat in the pair's first game.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True, slots=True)
class Pairing:
    """Two players who meet; ``first`` has the first seat in the first game of the pair."""

    first: str
    second: str

    def games(self) -> tuple[tuple[str, str], tuple[str, str]]:
        """The game pair as ``(first seat, second seat)`` tuples, sides swapped in leg 2."""
        return (self.first, self.second), (self.second, self.first)

    @property
    def players(self) -> frozenset[str]:
        return frozenset((self.first, self.second))


@dataclass(frozen=True, slots=True)
class Round:
    """One round: its number (from 1), the pairings (board 1 first) and who sits out."""

    number: int
    pairings: tuple[Pairing, ...]
    byes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game to play. ``(round, board, leg)`` identifies it within a tournament, which
    is what lets a resumed tournament tell played games from missing ones."""

    round: int
    board: int
    leg: int
    first: str
    second: str


def expand(rounds: Iterable[Round]) -> list[ScheduledGame]:
    """Every game of ``rounds``: each pairing becomes legs 1 and 2 with the sides swapped."""
    games: list[ScheduledGame] = []
    for rnd in rounds:
        for board, pairing in enumerate(rnd.pairings, start=1):
            for leg, (first, second) in enumerate(pairing.games(), start=1):
                games.append(ScheduledGame(rnd.number, board, leg, first, second))
    return games


def _check_players(players: Sequence[str]) -> None:
    if len(set(players)) != len(players):
        raise ValueError("duplicate players")


# --- round robin -----------------------------------------------------------------------------


def round_robin(players: Sequence[str], cycles: int = 1) -> list[Round]:
    """All-play-all by the circle method: every pair meets once per cycle (a game pair, so
    2 x ``cycles`` games in all).

    Player 0 stays put while the others rotate; with an odd count a phantom makes the
    numbers even and whoever meets it has a bye. Colours alternate (no one is first more
    than one time more often than second in a cycle, nor three times running), and every
    second cycle swaps them, so over two cycles each pair has each colour once.
    """
    _check_players(players)
    if cycles < 1:
        raise ValueError("cycles must be >= 1")
    if len(players) < 2:
        return []
    slots: list[str | None] = list(players)
    if len(slots) % 2:
        # The phantom takes the fixed place: the fixed place's colour pattern is the one
        # that cannot alternate perfectly, and the phantom has no colours to balance.
        slots.insert(0, None)
    n = len(slots)
    fixed, rest = slots[0], slots[1:]
    rounds: list[Round] = []
    for cycle in range(cycles):
        for r in range(n - 1):
            order = [fixed, *rest[len(rest) - r :], *rest[: len(rest) - r]]
            pairings: list[Pairing] = []
            byes: list[str] = []
            for i in range(n // 2):
                a, b = order[i], order[n - 1 - i]
                if a is None or b is None:
                    byes.extend(x for x in (a, b) if x is not None)
                    continue
                # This rule gives each player alternating colours (see the docstring).
                a_first = (r % 2 == 0) if i == 0 else (i % 2 == 1)
                if cycle % 2:
                    a_first = not a_first
                pairings.append(Pairing(a, b) if a_first else Pairing(b, a))
            rounds.append(Round(len(rounds) + 1, tuple(pairings), tuple(byes)))
    return rounds


# --- gauntlet --------------------------------------------------------------------------------


def gauntlet(challenger: str, field: Sequence[str], cycles: int = 1) -> list[Round]:
    """``challenger`` against each bot of ``field``, once per cycle (one round per cycle).

    Unlike the other formats the challenger is in every pairing of a round, so a runner
    that can play only one game per bot at a time must play a round's pairings in turn.
    The challenger's colour alternates along the field and swaps every cycle.
    """
    _check_players([challenger, *field])
    if cycles < 1:
        raise ValueError("cycles must be >= 1")
    rounds: list[Round] = []
    for cycle in range(cycles):
        pairings = tuple(
            Pairing(challenger, opp) if (k + cycle) % 2 == 0 else Pairing(opp, challenger)
            for k, opp in enumerate(field)
        )
        rounds.append(Round(cycle + 1, pairings))
    return rounds


# --- Swiss -----------------------------------------------------------------------------------

SEARCH_BUDGET = 20_000
"""Search nodes the Dutch-order backtracking may visit before the matching-guided search
takes over (that one cannot fail when a pairing exists, but costs a matching per step)."""


def swiss_round(
    players: Sequence[str],
    scores: Mapping[str, float],
    history: Sequence[Round],
    *,
    search_budget: int = SEARCH_BUDGET,
) -> Round:
    """The next Swiss round, Dutch-style.

    ``players`` in seed order (best first, e.g. by rating); ``scores`` their points so far
    (missing = 0); ``history`` the rounds already paired (who met, colours, byes).

    - Players are ranked by score, then seed. Within a score group the top half meets the
      bottom half (1st vs 1st of the lower half, 2nd vs 2nd, ...); a player left over in an
      odd group floats down and meets the top of the next group.
    - No two players meet again while any pairing of the round avoids it: the Dutch order is
      searched with backtracking, checked by a maximum matching (Edmonds' blossom algorithm)
      so a repeat-free pairing is always found when one exists. When none exists, the
      fewest possible pairs are repeats. ``search_budget`` bounds the backtracking (in
      search nodes) before a greedy search guided by the matching takes over.
    - With an odd count the bye goes to the lowest-ranked player who has had the fewest
      byes (so no one gets a second bye while someone has none), provided the others can
      still be paired without repeats; a second bye is preferred to a repeat pairing.
    - Colours: the player who has had the first seat less often gets it; then the one who
      did not have it last round; then the higher-ranked player on odd rounds, the lower
      on even ones.
    """
    _check_players(players)
    seed = {p: i for i, p in enumerate(players)}
    number = len(history) + 1
    past = PairingHistory.of(players, history)
    order = sorted(players, key=lambda p: (-scores.get(p, 0.0), seed[p]))
    bye = _choose_bye(order, past) if len(order) % 2 else ()
    to_pair = [p for p in order if p not in bye]
    if _perfect_matching_exists(to_pair, past.met):
        pairs = _dutch_pairs(to_pair, scores, past.met, search_budget)
    else:
        pairs = _fewest_repeats(to_pair, past.met)
    pairings = tuple(colour_pairing(a, b, past.balance, past.last, number) for a, b in pairs)
    return Round(number, pairings, bye)


@dataclass(slots=True)
class PairingHistory:
    """What earlier rounds mean for the next one."""

    #: Who has met whom (both directions).
    met: dict[str, set[str]]
    byes: Counter[str]
    #: First seats minus second seats so far.
    balance: Counter[str]
    #: +1 if the player had the first seat in their last pairing, -1 for the second.
    last: dict[str, int]

    @classmethod
    def of(cls, players: Sequence[str], history: Sequence[Round]) -> PairingHistory:
        past = cls({p: set() for p in players}, Counter(), Counter(), {})
        for rnd in history:
            past.byes.update(b for b in rnd.byes if b in past.met)
            for pr in rnd.pairings:
                if pr.first in past.met and pr.second in past.met:
                    past.met[pr.first].add(pr.second)
                    past.met[pr.second].add(pr.first)
                past.balance[pr.first] += 1
                past.balance[pr.second] -= 1
                past.last[pr.first] = 1
                past.last[pr.second] = -1
        return past


def _choose_bye(order: Sequence[str], past: PairingHistory) -> tuple[str]:
    """The lowest-ranked player with the fewest byes whose absence leaves a repeat-free
    round; if no one's does, the lowest-ranked with the fewest byes."""
    candidates = sorted(order, key=lambda p: (past.byes[p], -order.index(p)))
    for c in candidates:
        if _perfect_matching_exists([p for p in order if p != c], past.met):
            return (c,)
    return (candidates[0],)


def colour_pairing(
    a: str, b: str, balance: Counter[str], last: Mapping[str, int], number: int
) -> Pairing:
    """``a`` is the higher-ranked player of the two."""
    if balance[a] != balance[b]:
        a_first = balance[a] < balance[b]
    elif last.get(a, 0) != last.get(b, 0):
        a_first = last.get(a, 0) < last.get(b, 0)
    else:
        a_first = number % 2 == 1
    return Pairing(a, b) if a_first else Pairing(b, a)


def _candidates(p: str, remaining: Sequence[str], scores: Mapping[str, float]) -> list[str]:
    """Opponents for ``p`` (the top of ``remaining``) in Dutch order of preference."""
    s = scores.get(p, 0.0)
    bracket = [x for x in remaining if scores.get(x, 0.0) == s]
    half = len(bracket) // 2
    lower = [x for x in remaining if scores.get(x, 0.0) != s and x != p]
    return [*bracket[half:], *reversed(bracket[1:half]), *lower]


class _OutOfBudget(Exception):
    pass


def _dutch_pairs(
    order: list[str], scores: Mapping[str, float], met: Mapping[str, set[str]], budget: int
) -> list[tuple[str, str]]:
    """A repeat-free pairing of ``order`` (one must exist), as close to Dutch order as found."""
    nodes = 0

    def search(remaining: list[str]) -> list[tuple[str, str]] | None:
        nonlocal nodes
        if not remaining:
            return []
        nodes += 1
        if nodes > budget:
            raise _OutOfBudget
        p = remaining[0]
        for q in _candidates(p, remaining, scores):
            if q in met[p] or q == p:
                continue
            sub = search([x for x in remaining if x != p and x != q])
            if sub is not None:
                return [(p, q), *sub]
        return None

    try:
        found = search(order)
        if found is not None:
            return found
    except _OutOfBudget:
        pass
    return _guided_pairs(order, scores, met)


def _guided_pairs(
    order: list[str], scores: Mapping[str, float], met: Mapping[str, set[str]]
) -> list[tuple[str, str]]:
    """Greedy in Dutch order, keeping only choices after which the rest can still be paired.

    A perfect matching of the players still to pair is carried along, so most checks are a
    lookup (:func:`_rematch`) rather than a new matching.
    """
    mate = _perfect_matching(order, met)
    pairs: list[tuple[str, str]] = []
    remaining = list(order)
    while remaining:
        assert mate is not None, "the caller checked that a perfect matching exists"
        p = remaining[0]
        for q in _candidates(p, remaining, scores):
            if q in met[p] or q == p:
                continue
            rest = [x for x in remaining if x != p and x != q]
            found = _rematch(mate, p, q, met) or _perfect_matching(rest, met)
            if found is not None or not rest:
                pairs.append((p, q))
                remaining, mate = rest, found or {}
                break
        else:  # pragma: no cover - the caller checked that a perfect matching exists
            raise AssertionError("no repeat-free pairing although one exists")
    return pairs


def _rematch(
    mate: Mapping[str, str], p: str, q: str, met: Mapping[str, set[str]]
) -> dict[str, str] | None:
    """A perfect matching without ``p`` and ``q``, from ``mate`` (perfect, with them) when a
    small change finds one: ``mate`` itself if it pairs them, else with their two former
    mates paired (directly or by one swap, :func:`_repair`). ``None``: not found this way."""
    rest = {k: v for k, v in mate.items() if k != p and k != q}
    if mate[p] == q:
        return rest
    a, b = mate[p], mate[q]
    del rest[a], rest[b]
    _repair(rest, [a, b], met)
    return rest if len(rest) == len(mate) - 2 else None


def _fewest_repeats(order: list[str], met: Mapping[str, set[str]]) -> list[tuple[str, str]]:
    """A maximum set of new pairs; the players left over meet again, in ranking order."""
    match = _max_matching(order, met)
    pairs: list[tuple[str, str]] = []
    leftover: list[str] = []
    done: set[str] = set()
    for p in order:
        if p in done:
            continue
        q = match.get(p)
        if q is None:
            leftover.append(p)
            continue
        pairs.append((p, q))
        done.update((p, q))
    pairs.extend(zip(leftover[0::2], leftover[1::2], strict=True))
    return pairs


def _perfect_matching_exists(players: Sequence[str], met: Mapping[str, set[str]]) -> bool:
    """Whether ``players`` can all be paired without a repeat."""
    return not players or _perfect_matching(players, met) is not None


def _perfect_matching(players: Sequence[str], met: Mapping[str, set[str]]) -> dict[str, str] | None:
    """A repeat-free pairing of all ``players`` (both directions), or ``None`` if none exists."""
    if len(players) % 2:
        return None
    # A greedy pairing, mended by swaps where it fell short, nearly always answers at once
    # while few players have met (the early rounds of a big event); only when it stays
    # incomplete does the exact matching (seconds for 500 players) decide.
    mate = _greedy_matching(players, met)
    if len(mate) < len(players):
        _repair(mate, [p for p in players if p not in mate], met)
    if len(mate) < len(players):
        mate = _max_matching(players, met)
    return mate if len(mate) == len(players) else None


def _greedy_matching(players: Sequence[str], met: Mapping[str, set[str]]) -> dict[str, str]:
    """Pair each player with the first free one they have not met, most-met players first
    (they have the fewest choices); may leave players unpaired where a matching would not."""
    free = sorted(players, key=lambda p: -len(met[p]))
    mate: dict[str, str] = {}
    while free:
        p = free.pop(0)
        q = next((x for x in free if x not in met[p]), None)
        if q is not None:
            free.remove(q)
            mate[p], mate[q] = q, p
    return mate


def _repair(mate: dict[str, str], free: Sequence[str], met: Mapping[str, set[str]]) -> None:
    """Add the ``free`` players to the matching ``mate`` (in place) where a short change
    allows: ``u`` with a free ``v`` they have not met, or, when they have met, ``u`` with
    ``c`` and ``v`` with ``d`` for a pair ``c``-``d`` of ``mate`` (an augmenting path of
    three edges). Players it cannot place stay out of ``mate``."""
    waiting = list(free)
    while len(waiting) >= 2:
        u = waiting.pop(0)
        v = next((x for x in waiting if x not in met[u]), None)
        if v is not None:
            waiting.remove(v)
            mate[u], mate[v] = v, u
            continue
        for v in waiting:
            swap = next(
                ((c, d) for c, d in mate.items() if c not in met[u] and d not in met[v]), None
            )
            if swap is not None:
                c, d = swap
                waiting.remove(v)
                mate[u], mate[c], mate[v], mate[d] = c, u, d, v
                break


def _max_matching(players: Sequence[str], met: Mapping[str, set[str]]) -> dict[str, str]:
    """A maximum matching of the "have not met yet" graph on ``players`` (both directions
    in the returned dict).

    networkx's ``max_weight_matching`` (Edmonds' blossom algorithm, O(n^3)) with every edge
    of weight 1 and ``maxcardinality=True`` is a maximum-cardinality matching. Measured with
    ``bench/pairing.py`` (CPU seconds, 500 players): one such matching takes about 0.3 s (the
    hand-written cardinality-only blossom it replaced took 0.02 s), but a whole Swiss round
    takes 0.01 s over an 11-round event and at most 0.08 s over 40 rounds (the replaced code:
    0.03 s and 2.3 s, with the same pairings), because :func:`_perfect_matching` and
    :func:`_rematch` answer nearly every question with a greedy matching mended by swaps and
    come here only when that fails. So networkx is fast enough for a 500-player round.
    """
    # Imported here, as in ratings.groups: most processes never need a matching.
    import networkx as nx

    graph: nx.Graph[str] = nx.Graph()
    graph.add_nodes_from(players)
    graph.add_edges_from(
        (a, b) for i, a in enumerate(players) for b in players[i + 1 :] if b not in met[a]
    )
    mate: dict[str, str] = {}
    for a, b in nx.max_weight_matching(graph, maxcardinality=True):
        mate[a], mate[b] = b, a
    return mate
