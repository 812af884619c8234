"""The leaderboard: one row per player, the head-to-head cross table and the LOS matrix."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from referee.ratings.elo import DEFAULT_INITIAL, DEFAULT_K, incremental_elo
from referee.ratings.groups import connected_groups, provisional_reason
from referee.ratings.los import los_matrix
from referee.ratings.mle import (
    DEFAULT_ANCHOR_RATING,
    DEFAULT_PRIOR_GAMES,
    Fit,
    fit_ratings,
)
from referee.ratings.results import GameResult, players_of


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """One player's record against one opponent (counted games only)."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    def as_dict(self) -> dict[str, Any]:
        return {
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "games": self.games,
            "points": self.points,
        }


@dataclass(frozen=True, slots=True)
class Row:
    """One leaderboard line. ``elo``/``ci95`` are the maximum-likelihood rating and the
    half-width of its 95% interval (``None`` for a player without counted games);
    ``forfeits`` counts the forfeits this player committed, by verdict (voided ones too).
    ``group`` is the player's connected group (1 is the largest; ratings of two groups are
    not comparable) and ``rank`` its place in that group; ``provisional`` says why the rating
    rests on too little (``None``: it does not)."""

    rank: int
    player: str
    elo: float | None
    ci95: float | None
    elo_incremental: float
    games: int
    wins: int
    draws: int
    losses: int
    score_pct: float | None
    forfeits: Mapping[str, int] = field(default_factory=dict)
    group: int = 1
    provisional: str | None = None

    @property
    def forfeit_total(self) -> int:
        return sum(self.forfeits.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "player": self.player,
            "elo": self.elo,
            "ci95": self.ci95,
            "elo_incremental": self.elo_incremental,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "score_pct": self.score_pct,
            "forfeits": dict(sorted(self.forfeits.items())),
            "group": self.group,
            "provisional": self.provisional,
        }

    def as_csv_row(self) -> dict[str, str | int | float]:
        """Flat values for a CSV writer (forfeits as ``verdict:count;...``)."""
        return {
            "rank": self.rank,
            "player": self.player,
            "elo": "" if self.elo is None else round(self.elo, 1),
            "ci95": "" if self.ci95 is None else round(self.ci95, 1),
            "elo_incremental": round(self.elo_incremental, 1),
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "score_pct": "" if self.score_pct is None else round(self.score_pct, 1),
            "forfeits": ";".join(f"{v}:{n}" for v, n in sorted(self.forfeits.items())),
            "group": self.group,
            "provisional": self.provisional or "",
        }


CSV_FIELDS = tuple(Row.__dataclass_fields__)


def cross_table(
    results: Iterable[GameResult], players: Sequence[str] | None = None
) -> dict[str, dict[str, HeadToHead]]:
    """``table[a][b]`` is a's record against b over the counted games; pairs that never met
    are absent."""
    tallies: dict[str, dict[str, list[int]]] = {}
    for p in players or ():
        tallies.setdefault(p, {})
    for r in results:
        if not r.counted:
            continue
        a = tallies.setdefault(r.first, {}).setdefault(r.second, [0, 0, 0])
        b = tallies.setdefault(r.second, {}).setdefault(r.first, [0, 0, 0])
        outcome = 0 if r.score == 1.0 else (1 if r.score == 0.5 else 2)
        a[outcome] += 1
        b[2 - outcome] += 1
    return {
        p: {q: HeadToHead(*wdl) for q, wdl in opponents.items()} for p, opponents in tallies.items()
    }


@dataclass(frozen=True, slots=True, eq=False)
class Leaderboard:
    """Everything the table shows: rows by group then best first, the fit behind them, the
    cross table and the LOS matrix (``los[a][b]`` = probability a is stronger than b, only
    within a group). ``groups`` counts the connected groups of rated players (1: one comparable
    table); players without counted games come last, in a group numbered after them."""

    rows: tuple[Row, ...]
    fit: Fit
    cross: Mapping[str, Mapping[str, HeadToHead]]
    los: Mapping[str, Mapping[str, float]]
    groups: int = 1

    def group_rows(self) -> list[tuple[int, list[Row]]]:
        """The rows of each group, group 1 (the largest) first."""
        found: dict[int, list[Row]] = {}
        for r in self.rows:
            found.setdefault(r.group, []).append(r)
        return sorted(found.items())

    @property
    def anchor(self) -> str:
        return self.fit.anchor_description

    @property
    def games(self) -> int:
        """How many counted games the table rests on."""
        return self.fit.games

    def games_in(self, group: int) -> int:
        """How many counted games the players of ``group`` played: among themselves, since a
        game between two players puts them in one group."""
        return sum(r.games for r in self.rows if r.group == group) // 2

    def adjacent_los(self) -> list[tuple[str, str, float | None]]:
        """Each rated row and the one below it in its group, with the likelihood that the
        upper one is truly stronger (how sure the order of the two is; ``None``: unknown)."""
        out: list[tuple[str, str, float | None]] = []
        for _, rows in self.group_rows():
            rated = [r for r in rows if r.elo is not None]
            for upper, lower in itertools.pairwise(rated):
                out.append(
                    (upper.player, lower.player, self.los.get(upper.player, {}).get(lower.player))
                )
        return out

    def row(self, player: str) -> Row:
        for r in self.rows:
            if r.player == player:
                return r
        raise KeyError(player)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (no NaN, no numpy types)."""
        return {
            "anchor": self.anchor,
            "games": self.fit.games,
            "connected": self.fit.connected,
            "groups": self.groups,
            "seat_advantage": self.fit.seat_advantage,
            "seat_advantage_stderr": self.fit.seat_advantage_stderr,
            "rows": [r.as_dict() for r in self.rows],
            "cross_table": {
                a: {b: h.as_dict() for b, h in opp.items()} for a, opp in self.cross.items()
            },
            "los": {a: dict(opp) for a, opp in self.los.items()},
        }


def build_leaderboard(
    results: Iterable[GameResult],
    *,
    players: Sequence[str] | None = None,
    anchor: str | None = None,
    anchor_rating: float = DEFAULT_ANCHOR_RATING,
    k: float = DEFAULT_K,
    initial: float = DEFAULT_INITIAL,
    prior_games: float = DEFAULT_PRIOR_GAMES,
    seat_advantage: bool = False,
) -> Leaderboard:
    """The table for ``results`` (in the order played: only the incremental Elo cares).

    ``players`` adds players without games (they get a row without a rating). Rows are
    ordered by maximum-likelihood Elo, then score; unrated players come last.
    """
    games = list(results)
    names = list(players or ())
    for p in players_of(games):
        if p not in names:
            names.append(p)
    counted = [r for r in games if r.counted]
    rated_set = {p for r in counted for p in (r.first, r.second)}
    rated = [p for p in names if p in rated_set]
    fit = fit_ratings(
        counted,
        players=rated,
        anchor=anchor,
        anchor_rating=anchor_rating,
        prior_games=prior_games,
        seat_advantage=seat_advantage,
    )
    incremental = incremental_elo(games, k=k, initial=initial)
    cross = cross_table(games, names)
    forfeits = _forfeits(games, names)

    group = connected_groups(counted, rated)
    elo_inc = {p: incremental.get(p, initial) for p in names}
    rows = _grouped_rows(names, group, fit, cross, forfeits, elo_inc)
    los = _los_table(fit)
    los = {a: {b: v for b, v in opp.items() if group[a] == group[b]} for a, opp in los.items()}
    return Leaderboard(tuple(rows), fit, cross, los, max(len(set(group.values())), 1))


def _grouped_rows(
    names: Sequence[str],
    group: Mapping[str, int],
    fit: Fit,
    cross: Mapping[str, Mapping[str, HeadToHead]],
    forfeits: Mapping[str, dict[str, int]],
    incremental: Mapping[str, float],
) -> list[Row]:
    """Rows by group (rated players' groups first), best first within each, ranked within
    their group; players without counted games (absent from ``group``) last."""
    unrated_group = max(group.values(), default=0) + 1

    def sort_key(p: str) -> tuple[int, int, float, float, str]:
        total = list(cross[p].values())
        games_n = sum(h.games for h in total)
        pct = sum(h.points for h in total) / games_n if games_n else 0.0
        if p in group:
            return (0, group[p], -fit.rating(p), -pct, p)
        return (1, unrated_group, 0.0, -pct, p)

    rows: list[Row] = []
    ranks: dict[int, int] = {}
    for p in sorted(names, key=sort_key):
        g = group.get(p, unrated_group)
        ranks[g] = ranks.get(g, 0) + 1
        row = _row(
            ranks[g],
            p,
            list(cross[p].values()),
            fit if p in group else None,
            incremental[p],
            forfeits[p],
        )
        rows.append(replace(row, group=g, provisional=provisional_reason(row.games)))
    return rows


def _row(
    rank: int,
    player: str,
    h2h: Sequence[HeadToHead],
    fit: Fit | None,
    elo_incremental: float,
    forfeits: dict[str, int],
) -> Row:
    """One player's line; ``fit`` is ``None`` for a player without counted games."""
    w = sum(h.wins for h in h2h)
    d = sum(h.draws for h in h2h)
    losses = sum(h.losses for h in h2h)
    n = w + d + losses
    return Row(
        rank=rank,
        player=player,
        elo=fit.rating(player) if fit is not None else None,
        ci95=fit.ci95(player) if fit is not None else None,
        elo_incremental=elo_incremental,
        games=n,
        wins=w,
        draws=d,
        losses=losses,
        score_pct=100.0 * (w + 0.5 * d) / n if n else None,
        forfeits=forfeits,
    )


def _forfeits(games: Sequence[GameResult], names: Sequence[str]) -> dict[str, dict[str, int]]:
    """Per player, how many games they forfeited, by verdict."""
    forfeits: dict[str, dict[str, int]] = {p: {} for p in names}
    for r in games:
        who = r.forfeiter
        if who is not None:
            forfeits[who][r.verdict] = forfeits[who].get(r.verdict, 0) + 1
    return forfeits


def _los_table(fit: Fit) -> dict[str, dict[str, float]]:
    """Likelihood of superiority of each rated player over each other one."""
    matrix = los_matrix(fit)
    return {
        a: {
            b: float(matrix[i, j])
            for j, b in enumerate(fit.players)
            if i != j and not math.isnan(matrix[i, j])
        }
        for i, a in enumerate(fit.players)
    }
