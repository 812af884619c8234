"""Who plays whom: round robin, Swiss (Dutch-style) and gauntlet pairings.

Pure functions on player ids. A :class:`Pairing` is always played as a game pair with the
sides swapped (:meth:`Pairing.games`), so every pairing gives both players each seat once;
"colour" below means who takes the first seat in the pair's first game.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


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
    met: dict[str, set[str]] = {p: set() for p in players}
    byes: Counter[str] = Counter()
    balance: Counter[str] = Counter()
    last: dict[str, int] = {}
    for rnd in history:
        byes.update(b for b in rnd.byes if b in seed)
        for pr in rnd.pairings:
            if pr.first in met and pr.second in met:
                met[pr.first].add(pr.second)
                met[pr.second].add(pr.first)
            balance[pr.first] += 1
            balance[pr.second] -= 1
            last[pr.first] = 1
            last[pr.second] = -1
    order = sorted(players, key=lambda p: (-scores.get(p, 0.0), seed[p]))

    bye: tuple[str, ...] = ()
    to_pair = order
    if len(order) % 2:
        candidates = sorted(order, key=lambda p: (byes[p], -order.index(p)))
        chosen = candidates[0]
        for c in candidates:
            rest = [p for p in order if p != c]
            if _perfect_matching_exists(rest, met):
                chosen = c
                break
        bye = (chosen,)
        to_pair = [p for p in order if p != chosen]

    if _perfect_matching_exists(to_pair, met):
        pairs = _dutch_pairs(to_pair, scores, met, search_budget)
    else:
        pairs = _fewest_repeats(to_pair, met)

    pairings: list[Pairing] = []
    for a, b in pairs:
        pairings.append(_colour(a, b, balance, last, number))
    return Round(number, tuple(pairings), bye)


def _colour(a: str, b: str, balance: Counter[str], last: Mapping[str, int], number: int) -> Pairing:
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
    # Greedy in Dutch order, keeping only choices after which the rest can still be paired.
    pairs: list[tuple[str, str]] = []
    remaining = list(order)
    while remaining:
        p = remaining[0]
        for q in _candidates(p, remaining, scores):
            if q in met[p]:
                continue
            rest = [x for x in remaining if x != p and x != q]
            if _perfect_matching_exists(rest, met):
                pairs.append((p, q))
                remaining = rest
                break
        else:  # pragma: no cover - the caller checked that a perfect matching exists
            raise AssertionError("no repeat-free pairing although one exists")
    return pairs


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
    if len(players) % 2:
        return False
    return len(_max_matching(players, met)) == len(players)


def _max_matching(players: Sequence[str], met: Mapping[str, set[str]]) -> dict[str, str]:
    """A maximum matching of the "have not met yet" graph on ``players`` (both directions
    in the returned dict), by Edmonds' blossom algorithm."""
    n = len(players)
    adj = [[j for j in range(n) if j != i and players[j] not in met[players[i]]] for i in range(n)]
    mate = _blossom(n, adj)
    return {players[i]: players[mate[i]] for i in range(n) if mate[i] >= 0}


def _blossom(n: int, adj: list[list[int]]) -> list[int]:
    """Maximum-cardinality matching in a general graph: ``mate[v]`` or -1.

    Grows alternating trees from each free vertex by breadth-first search, contracting odd
    cycles (blossoms) into their base as they are found; O(n^3).
    """
    mate = [-1] * n
    for v in range(n):  # a greedy start leaves few augmenting paths to search for
        if mate[v] == -1:
            for u in adj[v]:
                if mate[u] == -1:
                    mate[u], mate[v] = v, u
                    break

    def augmenting_path_end(root: int) -> tuple[int, list[int]]:
        parent = [-1] * n
        base = list(range(n))
        in_tree = [False] * n
        in_tree[root] = True
        queue = deque([root])

        def common_base(a: int, b: int) -> int:
            seen = [False] * n
            while True:
                a = base[a]
                seen[a] = True
                if mate[a] == -1:
                    break
                a = parent[mate[a]]
            while True:
                b = base[b]
                if seen[b]:
                    return b
                b = parent[mate[b]]

        def mark(v: int, b: int, child: int, in_blossom: list[bool]) -> None:
            while base[v] != b:
                in_blossom[base[v]] = in_blossom[base[mate[v]]] = True
                parent[v] = child
                child = mate[v]
                v = parent[mate[v]]

        while queue:
            v = queue.popleft()
            for to in adj[v]:
                if base[v] == base[to] or mate[v] == to:
                    continue
                if to == root or (mate[to] != -1 and parent[mate[to]] != -1):
                    b = common_base(v, to)
                    in_blossom = [False] * n
                    mark(v, b, to, in_blossom)
                    mark(to, b, v, in_blossom)
                    for i in range(n):
                        if in_blossom[base[i]]:
                            base[i] = b
                            if not in_tree[i]:
                                in_tree[i] = True
                                queue.append(i)
                elif parent[to] == -1:
                    parent[to] = v
                    if mate[to] == -1:
                        return to, parent
                    in_tree[mate[to]] = True
                    queue.append(mate[to])
        return -1, parent

    for root in range(n):
        if mate[root] != -1:
            continue
        end, parent = augmenting_path_end(root)
        while end != -1:
            prev = parent[end]
            nxt = mate[prev]
            mate[end], mate[prev] = prev, end
            end = nxt
    return mate
