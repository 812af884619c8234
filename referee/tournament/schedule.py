"""From a stored tournament to the pairings to play next (and storing them).

Round robin and gauntlet schedules are fixed: every round is stored at the start (rounds a
crash left unstored are added on resume; the schedule is deterministic, so they are the same
rounds). Swiss is paired one round at a time from the stored results, once the previous round
is complete; a stored round is never paired again.
"""

from __future__ import annotations

import contextlib
import math
from collections import defaultdict
from collections.abc import Sequence

from referee.ratings.mle import tally
from referee.storage import (
    BotVersionInfo,
    ConflictError,
    PairingInfo,
    PairingStatus,
    Repository,
    TournamentFormat,
    TournamentInfo,
)
from referee.tournament.adaptive import (
    DEFAULT_CONFIDENCE,
    adaptive_round,
    order_settled,
    pairing_fit,
)
from referee.tournament.pairing import Pairing, Round, gauntlet, round_robin, swiss_round

_OPEN = (PairingStatus.PENDING, PairingStatus.RUNNING)


def swiss_rounds(settings_rounds: int | None, players: int) -> int:
    """Swiss rounds: as set, else enough to separate the players (ceil log2 n, at least 1)."""
    if settings_rounds:
        return settings_rounds
    return max(1, math.ceil(math.log2(max(players, 2))))


BUDGET_SHARE = 0.25
"""The adaptive format's default budget: this share of a one-cycle round robin's games."""


def adaptive_rounds(players: int, games_per_pairing: int, budget: int | None) -> int:
    """The adaptive format's most rounds: whole rounds within ``budget`` games (default a
    quarter of a one-cycle round robin's games), at least one."""
    per_round = max(1, players // 2) * games_per_pairing
    default = BUDGET_SHARE * (players * (players - 1) // 2) * games_per_pairing
    return max(1, int(budget or default) // per_round)


def adaptive_terms(t: TournamentInfo, players: int) -> tuple[float, int]:
    """The adaptive format's confidence and most rounds (``options["confidence"]`` and
    ``options["budget"]``, in games)."""
    s = t.settings
    confidence = float(s.options.get("confidence", DEFAULT_CONFIDENCE))
    budget = s.options.get("budget")
    return confidence, adaptive_rounds(players, s.games_per_pairing, budget)


def planned_games(
    fmt: TournamentFormat,
    entrants: int,
    *,
    games_per_pairing: int = 2,
    cycles: int | None = None,
    rounds: int | None = None,
    budget: int | None = None,
) -> int:
    """How many games a tournament of ``fmt`` plays (Swiss: one bye per odd round; adaptive:
    at most, it may settle sooner)."""
    per = games_per_pairing
    if fmt is TournamentFormat.ROUND_ROBIN:
        return (entrants * (entrants - 1) // 2) * (cycles or 1) * per
    if fmt is TournamentFormat.GAUNTLET:
        return (entrants - 1) * (cycles or 1) * per
    if fmt is TournamentFormat.SWISS:
        return (entrants // 2) * swiss_rounds(rounds, entrants) * per
    if fmt is TournamentFormat.ADAPTIVE:
        return (entrants // 2) * adaptive_rounds(entrants, per, budget) * per
    raise ValueError(f"format {fmt} is not scheduled by the runner")


def total_games_planned(t: TournamentInfo, entrants: int) -> int:
    """How many games the whole tournament plays (see :func:`planned_games`)."""
    s = t.settings
    return planned_games(
        TournamentFormat(s.format),
        entrants,
        games_per_pairing=s.games_per_pairing,
        cycles=s.cycles,
        rounds=s.rounds,
        budget=s.options.get("budget"),
    )


def challenger_of(t: TournamentInfo, entrants: Sequence[BotVersionInfo]) -> BotVersionInfo:
    """The gauntlet's challenger: ``options["challenger"]`` (name, label or id), else seed 0."""
    wanted = t.settings.options.get("challenger")
    if wanted is None:
        return entrants[0]
    for e in entrants:
        if str(wanted) in (e.bot_name, e.label, str(e.id)):
            return e
    raise ValueError(f"the challenger {wanted!r} is not an entrant")


def _fixed_rounds(t: TournamentInfo, entrants: Sequence[BotVersionInfo]) -> list[Round]:
    ids = [str(e.id) for e in entrants]
    cycles = t.settings.cycles or 1
    if t.settings.format is TournamentFormat.ROUND_ROBIN:
        return round_robin(ids, cycles)
    challenger = str(challenger_of(t, entrants).id)
    return gauntlet(challenger, [i for i in ids if i != challenger], cycles)


def _store_round(repo: Repository, t_id: int, rnd: Round) -> None:
    pairs: list[tuple[int, int | None]] = [(int(p.first), int(p.second)) for p in rnd.pairings]
    pairs += [(int(b), None) for b in rnd.byes]
    if not pairs:
        return
    # ConflictError: another runner stored the same round meanwhile; the stored one stands.
    with contextlib.suppress(ConflictError):
        repo.add_pairings(t_id, rnd.number, pairs)


def next_pairings(
    repo: Repository, t: TournamentInfo, entrants: Sequence[BotVersionInfo]
) -> list[PairingInfo] | None:
    """The open pairings to play now; ``None`` when the tournament is complete.

    Stores whatever rounds are due first (all of a fixed schedule; the next Swiss round).
    """
    fmt = t.settings.format
    stored = repo.pairings(t.id)
    if fmt in (TournamentFormat.ROUND_ROBIN, TournamentFormat.GAUNTLET):
        have = {p.round for p in stored}
        missing = [r for r in _fixed_rounds(t, entrants) if r.number not in have]
        for rnd in missing:
            _store_round(repo, t.id, rnd)
        if missing:
            stored = repo.pairings(t.id)
        todo = [p for p in stored if p.status in _OPEN]
        return todo or None
    if fmt not in (TournamentFormat.SWISS, TournamentFormat.ADAPTIVE):
        raise ValueError(f"format {fmt} is not run by the tournament runner")
    last = max((p.round for p in stored), default=0)
    current = [p for p in stored if p.round == last and p.status in _OPEN]
    if current:
        return current
    if fmt is TournamentFormat.SWISS:
        if last >= swiss_rounds(t.settings.rounds, len(entrants)):
            return None
        ids = [str(e.id) for e in entrants]
        rnd = swiss_round(ids, swiss_scores(repo, t, stored), _history(stored))
    else:
        found = _adaptive_next(repo, t, entrants, stored, last)
        if found is None:
            return None
        rnd = found
    _store_round(repo, t.id, rnd)
    fresh = repo.pairings(t.id, round_number=rnd.number)
    todo = [p for p in fresh if p.status in _OPEN]
    # A round of byes only (one entrant) has nothing to play: go on to the next round.
    return todo or next_pairings(repo, t, entrants)


def _adaptive_next(
    repo: Repository,
    t: TournamentInfo,
    entrants: Sequence[BotVersionInfo],
    stored: Sequence[PairingInfo],
    last: int,
) -> Round | None:
    """The next adaptive round, or ``None`` when the budget is spent or the order settled."""
    confidence, most = adaptive_terms(t, len(entrants))
    if last >= most:
        return None
    results = repo.game_results(tournament_id=t.id)
    fit = pairing_fit(tally(results, [e.label for e in entrants]))
    if last and order_settled(fit.ratings, fit.covariance, confidence):
        return None
    ids = [str(e.id) for e in entrants]
    return adaptive_round(ids, fit.ratings, fit.covariance, _history(stored))


def _history(stored: Sequence[PairingInfo]) -> list[Round]:
    by_round: dict[int, list[PairingInfo]] = defaultdict(list)
    for p in stored:
        by_round[p.round].append(p)
    rounds = []
    for number in sorted(by_round):
        ps = sorted(by_round[number], key=lambda p: p.board)
        rounds.append(
            Round(
                number,
                tuple(
                    Pairing(str(p.bot_a_id), str(p.bot_b_id)) for p in ps if p.bot_b_id is not None
                ),
                tuple(str(p.bot_a_id) for p in ps if p.bot_b_id is None),
            )
        )
    return rounds


def swiss_scores(
    repo: Repository, t: TournamentInfo, stored: Sequence[PairingInfo] | None = None
) -> dict[str, float]:
    """Points per entrant id (as text): counted games, plus ``options["bye_points"]`` per bye
    (default a won game pair)."""
    scores: dict[str, float] = defaultdict(float)
    for g in repo.list_games(tournament_id=t.id, include_aborted=False, limit=None):
        if g.voided or not g.counted:
            continue
        for seat in g.seats:
            scores[str(seat.bot_version_id)] += seat.score
    bye = float(t.settings.options.get("bye_points", t.settings.games_per_pairing))
    for p in stored if stored is not None else repo.pairings(t.id):
        if p.bot_b_id is None:
            scores[str(p.bot_a_id)] += bye
    return dict(scores)
