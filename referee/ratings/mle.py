"""Maximum-likelihood Elo: a Bradley–Terry (logistic) fit of all games at once.

The model: a player rated ``r_i`` scores ``1 / (1 + 10 ** ((r_j - r_i) / 400))`` on average
against ``r_j``, optionally plus a first-seat advantage. A draw counts as half a win and half a
loss (as Ordo does), so the fit only uses each pair's total score and game count and does not
depend on the order of the games.

Speed: the games are first summed into two n-by-n matrices (games and points with i in the
first seat against j); Newton's method then works on those matrices, so one iteration costs
O(n^2 + n^3) whatever the number of games. The 95% intervals come from the inverse of the
Fisher information (the negative Hessian of the log-likelihood) at the optimum.

Perfect and zero scores: each player brings ``prior_games`` virtual draws, spread over the
opponents it actually met in proportion to the games against each (half of each virtual
draw counted from each side). Every pair that met then has points on both sides, so every
rating is finite; the virtual draws pull each pair's score towards 50% by about
``prior_games / games played``, the same fraction at every distance on the scale, so unlike
a prior centred on a fixed rating they do not squeeze a long chain of players together.

See ``docs/ratings.md`` for the conventions (anchor, intervals) in full.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from referee.ratings.results import GameResult, players_of

FloatArray = npt.NDArray[np.float64]

ELO_PER_NAT = 400.0 / math.log(10.0)
"""Elo points per unit of the natural-log odds scale the fit works in."""
Z95 = 1.959963984540054
DEFAULT_ANCHOR_RATING = 1500.0
DEFAULT_PRIOR_GAMES = 1.0
_TOLERANCE = 1e-9  # largest Newton step (natural units) at which the fit counts as converged
_MAX_ITERATIONS = 100


@dataclass(frozen=True, slots=True, eq=False)
class Tally:
    """Games summed per ordered pair: ``games[i, j]`` with i first and j second, and
    ``points[i, j]`` the first seat's points in those games."""

    players: tuple[str, ...]
    games: FloatArray
    points: FloatArray

    @property
    def total_games(self) -> int:
        return round(float(self.games.sum()))


def tally(results: Iterable[GameResult], players: Sequence[str] | None = None) -> Tally:
    """Sum the counted games into per-pair matrices (voided games are left out)."""
    counted = [r for r in results if r.counted]
    names = tuple(players) if players is not None else tuple(players_of(counted))
    index = {p: i for i, p in enumerate(names)}
    if len(index) != len(names):
        raise ValueError("duplicate player names")
    n = len(names)
    try:
        cells = np.fromiter(
            (index[r.first] * n + index[r.second] for r in counted),
            dtype=np.int64,
            count=len(counted),
        )
    except KeyError as e:
        raise ValueError(f"result for a player not in the list: {e.args[0]!r}") from None
    scores = np.fromiter((r.score for r in counted), dtype=np.float64, count=len(counted))
    games = np.bincount(cells, minlength=n * n).astype(np.float64).reshape(n, n)
    points = np.asarray(
        np.bincount(cells, weights=scores, minlength=n * n), dtype=np.float64
    ).reshape(n, n)
    return Tally(names, games, points)


@dataclass(frozen=True, slots=True, eq=False)
class Fit:
    """The fitted ratings (Elo points, anchored) and their covariance.

    ``covariance`` is that of the anchored ratings, so with a named anchor its row and column
    are zero, and with the mean anchor it is the covariance of each rating minus the mean.
    Players listed without any counted game have NaN rating and covariance.
    """

    players: tuple[str, ...]
    ratings: FloatArray
    covariance: FloatArray
    anchor: str | None
    anchor_rating: float
    games: int
    iterations: int
    seat_advantage: float | None
    seat_advantage_stderr: float | None
    prior_games: float
    connected: bool = True
    """False when the games split the players into groups that never met one another: the
    gaps between such groups are then not determined by the games (the intervals only hold
    within a group)."""

    def _index(self, player: str) -> int:
        try:
            return self.players.index(player)
        except ValueError:
            raise KeyError(player) from None

    def rating(self, player: str) -> float:
        return float(self.ratings[self._index(player)])

    def stderr(self, player: str) -> float:
        i = self._index(player)
        return math.sqrt(max(float(self.covariance[i, i]), 0.0))

    def ci95(self, player: str) -> float:
        """Half-width of the 95% interval: the rating is ``rating ± ci95``."""
        return Z95 * self.stderr(player)

    def difference_stderr(self, a: str, b: str) -> float:
        """Standard error of ``rating(a) - rating(b)`` (independent of the anchor)."""
        i, j = self._index(a), self._index(b)
        c = self.covariance
        return math.sqrt(max(float(c[i, i] + c[j, j] - 2.0 * c[i, j]), 0.0))

    def as_dict(self) -> dict[str, float]:
        return {p: float(r) for p, r in zip(self.players, self.ratings, strict=True)}

    @property
    def anchor_description(self) -> str:
        if self.anchor is None:
            return f"average rating = {self.anchor_rating:g}"
        return f"{self.anchor} = {self.anchor_rating:g}"


def _log_sigmoid(x: FloatArray) -> FloatArray:
    return -np.logaddexp(0.0, -x)


def _sigmoid(x: FloatArray) -> FloatArray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


@dataclass(frozen=True, slots=True, eq=False)
class _Cells:
    """The ordered pairs that played (``games[i, j] > 0``), as flat arrays: the likelihood
    only has terms there, so a sparse schedule (Swiss, adaptive) costs its games, not n²."""

    n: int
    first: npt.NDArray[np.intp]
    second: npt.NDArray[np.intp]
    games: FloatArray
    points: FloatArray

    @classmethod
    def of(cls, games: FloatArray, points: FloatArray) -> _Cells:
        first, second = np.nonzero(games > 0)
        return cls(len(games), first, second, games[first, second], points[first, second])

    def sums(self, values: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Per player, ``values`` summed over its cells as first and as second seat."""
        return (
            np.asarray(np.bincount(self.first, weights=values, minlength=self.n), np.float64),
            np.asarray(np.bincount(self.second, weights=values, minlength=self.n), np.float64),
        )


def _objective(theta: FloatArray, eta: float, cells: _Cells) -> float:
    d = theta[cells.first] - theta[cells.second] + eta
    ll = cells.points * _log_sigmoid(d) + (cells.games - cells.points) * _log_sigmoid(-d)
    return float(ll.sum())


def _gradient_information(
    theta: FloatArray, eta: float, cells: _Cells, use_eta: bool
) -> tuple[FloatArray, FloatArray]:
    """Gradient of the log-likelihood and the Fisher information (negative Hessian), over
    the ratings and, if fitted, the seat advantage as the last coordinate."""
    n = cells.n
    p = _sigmoid(theta[cells.first] - theta[cells.second] + eta)
    resid = cells.points - cells.games * p  # first seat's surplus over expectation, per cell
    w = cells.games * p * (1.0 - p)
    m = n + 1 if use_eta else n
    grad = np.empty(m)
    as_first, as_second = cells.sums(resid)
    grad[:n] = as_first - as_second
    flat = np.bincount(cells.first * n + cells.second, weights=w, minlength=n * n)
    sym = flat.reshape(n, n) + flat.reshape(n, n).T
    info = np.empty((m, m))
    info[:n, :n] = -sym
    info[np.arange(n), np.arange(n)] = sym.sum(axis=1) - np.diag(sym)
    if use_eta:
        grad[n] = float(resid.sum())
        w_first, w_second = cells.sums(w)
        cross = w_first - w_second
        info[:n, n] = cross
        info[n, :n] = cross
        info[n, n] = float(w.sum())
    return grad, info


def _components(met: npt.NDArray[np.bool_]) -> int:
    """How many groups of players are linked by games (1 when everyone is connected)."""
    n = len(met)
    seen = np.zeros(n, dtype=bool)
    groups = 0
    for start in range(n):
        if seen[start]:
            continue
        groups += 1
        frontier = np.zeros(n, dtype=bool)
        frontier[start] = True
        while frontier.any():
            seen |= frontier
            frontier = met[frontier].any(axis=0) & ~seen
    return groups


def _with_virtual_draws(
    games: FloatArray, points: FloatArray, prior_games: float
) -> tuple[FloatArray, FloatArray]:
    total = games + games.T
    per_player = total.sum(axis=1)
    inverse = np.divide(1.0, per_player, out=np.zeros_like(per_player), where=per_player > 0)
    virtual = 0.5 * prior_games * total * (inverse[:, None] + inverse[None, :])
    # Half of each pair's virtual draws in each seating, so the seat advantage stays free.
    return games + virtual / 2.0, points + virtual / 4.0


def fit_tally(
    t: Tally,
    *,
    anchor: str | None = None,
    anchor_rating: float = DEFAULT_ANCHOR_RATING,
    prior_games: float = DEFAULT_PRIOR_GAMES,
    seat_advantage: bool = False,
    start: FloatArray | None = None,
    rating_prior_sd: float | None = None,
    tolerance: float = _TOLERANCE,
) -> Fit:
    """Fit already-tallied games; see :func:`fit_ratings`. ``start``: ratings (Elo, NaN for
    none) to start Newton's method from, e.g. the last fit (the optimum is the same); a normal
    prior of ``rating_prior_sd`` Elo around the mean links groups that never met (the maximum
    is then the posterior mode); ``tolerance``: the largest Newton step (nats) that stops."""
    if anchor is not None and anchor not in t.players:
        raise KeyError(anchor)
    if prior_games < 0:
        raise ValueError("prior_games must be >= 0")
    total = t.games + t.games.T
    rated = np.flatnonzero(total.sum(axis=1) > 0)
    if anchor is not None and t.players.index(anchor) not in rated:
        raise ValueError(f"the anchor {anchor!r} has no counted games")
    games, points = _with_virtual_draws(t.games, t.points, prior_games)
    games, points = games[np.ix_(rated, rated)], points[np.ix_(rated, rated)]
    n = len(rated)
    connected = _components(total[np.ix_(rated, rated)] > 0) <= 1
    use_eta = seat_advantage
    ridge = 0.0 if rating_prior_sd is None else (ELO_PER_NAT / rating_prior_sd) ** 2
    gauge = _gauge(n, use_eta, ridge)
    regular = connected or ridge > 0  # a prior links the groups
    terms = (cells := _Cells.of(games, points), use_eta, gauge, regular, ridge, tolerance)
    theta, eta, iterations = _newton(*terms, _start(start, rated))
    if iterations >= _MAX_ITERATIONS and start is not None:  # a start far off: from zero
        theta, eta, iterations = _newton(*terms, np.zeros(n))
    info = np.zeros_like(gauge)
    if n:
        _, info = _gradient_information(theta, eta, cells, use_eta)
    cov_nat = _inverse(info + gauge, regular)
    anchor_at = None if anchor is None else rated.tolist().index(t.players.index(anchor))
    ratings, cov = _spread(len(t.players), rated, *_to_elo(theta, cov_nat[:n, :n], anchor_at))
    ratings[rated] += anchor_rating
    adv = adv_se = None
    if use_eta:
        adv = eta * ELO_PER_NAT
        adv_se = math.sqrt(max(float(cov_nat[n, n]), 0.0)) * ELO_PER_NAT
    return Fit(
        players=t.players,
        ratings=ratings,
        covariance=cov,
        anchor=anchor,
        anchor_rating=anchor_rating,
        games=t.total_games,
        iterations=iterations,
        seat_advantage=adv,
        seat_advantage_stderr=adv_se,
        prior_games=prior_games,
        connected=connected,
    )


def _gauge(n: int, use_eta: bool, ridge: float) -> FloatArray:
    """What is added to the information matrix before it is solved or inverted.

    Adding the same constant to every rating changes nothing, so the information matrix is
    singular along that direction. Adding 1/n per rating pair there makes it invertible
    without touching the other directions (the gradient has no component along it), and the
    anchoring removes the direction again. A prior adds ``ridge`` to each rating's diagonal.
    """
    gauge = np.zeros((n + use_eta, n + use_eta))
    gauge[:n, :n] = 1.0 / max(n, 1)
    gauge[np.arange(n), np.arange(n)] += ridge
    return gauge


def _start(start: FloatArray | None, rated: npt.NDArray[np.intp]) -> FloatArray:
    """Where Newton's method starts (nats, mean zero): ``start`` (Elo) or all zero."""
    if start is None or not len(rated):
        return np.zeros(len(rated))
    given = np.nan_to_num(np.asarray(start, dtype=np.float64)[rated]) / ELO_PER_NAT
    return np.asarray(given - float(given.mean()), dtype=np.float64)


def _newton(
    cells: _Cells,
    use_eta: bool,
    gauge: FloatArray,
    regular: bool,
    ridge: float,
    tolerance: float,
    theta: FloatArray,
) -> tuple[FloatArray, float, int]:
    """Maximise the likelihood (minus ``ridge`` Σθ²/2, a prior) by Newton's method from
    ``theta`` (nats): the ratings (nats), the seat advantage (nats, 0 unless ``use_eta``) and
    the iterations taken. ``gauge`` already holds the ridge on its diagonal."""
    n = cells.n
    eta = 0.0

    def objective(th: FloatArray, et: float) -> float:
        return _objective(th, et, cells) - 0.5 * ridge * float(th @ th)

    current = objective(theta, eta)
    iterations = 0
    for iterations in range(1, _MAX_ITERATIONS + 1):  # noqa: B007 - the count is reported
        if n == 0:
            break
        grad, info = _gradient_information(theta, eta, cells, use_eta)
        grad[:n] -= ridge * theta
        step = _solve(info + gauge, grad, regular)
        # Newton is not guaranteed to go uphill far from the optimum: halve until it does.
        scale = 1.0
        while True:
            new_theta = theta + scale * step[:n]
            new_eta = eta + scale * float(step[n]) if use_eta else 0.0
            value = objective(new_theta, new_eta)
            if value >= current - 1e-12 * abs(current) or scale < 1e-6:
                break
            scale /= 2.0
        theta, eta, current = new_theta, new_eta, value
        if float(np.max(np.abs(scale * step))) < tolerance:
            break
    return theta, eta, iterations


def _spread(
    size: int, rated: npt.NDArray[np.intp], ratings: FloatArray, cov: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """The rated players' ratings and covariance placed among all ``size`` (NaN elsewhere)."""
    full = np.full(size, np.nan)
    full_cov = np.full((size, size), np.nan)
    full[rated], full_cov[np.ix_(rated, rated)] = ratings, cov
    return full, full_cov


def _to_elo(
    theta: FloatArray, cov_nat: FloatArray, anchor_at: int | None
) -> tuple[FloatArray, FloatArray]:
    """Ratings (nats) and their covariance as Elo differences: from the mean of the rated
    players, or from the player at ``anchor_at`` (whose rating is then exactly 0)."""
    # T x and T C T' for T = I - 11'/n (the mean) or T = I - 1e_a' (the anchor), written out:
    # two n-cubed products cost more than the fit's Newton steps on a sparse schedule.
    if anchor_at is None:
        ratings = theta - theta.mean() if len(theta) else theta.copy()
        row = cov_nat.mean(axis=1) if len(theta) else np.zeros(0)
        cov = cov_nat - row[:, None] - row[None, :] + (row.mean() if len(theta) else 0.0)
    else:
        ratings = theta - theta[anchor_at]
        col = cov_nat[:, anchor_at]
        cov = cov_nat - col[:, None] - col[None, :] + cov_nat[anchor_at, anchor_at]
    return ratings * ELO_PER_NAT, cov * ELO_PER_NAT**2


def _solve(matrix: FloatArray, grad: FloatArray, regular: bool) -> FloatArray:
    if regular:
        return np.asarray(np.linalg.solve(matrix, grad), dtype=np.float64)
    # Separate groups of players leave more than one free constant: take the smallest step.
    return np.asarray(np.linalg.lstsq(matrix, grad, rcond=None)[0], dtype=np.float64)


def _inverse(matrix: FloatArray, regular: bool) -> FloatArray:
    if regular:
        return np.asarray(np.linalg.inv(matrix), dtype=np.float64)
    return np.asarray(np.linalg.pinv(matrix, hermitian=True), dtype=np.float64)


def fit_ratings(
    results: Iterable[GameResult],
    *,
    players: Sequence[str] | None = None,
    anchor: str | None = None,
    anchor_rating: float = DEFAULT_ANCHOR_RATING,
    prior_games: float = DEFAULT_PRIOR_GAMES,
    seat_advantage: bool = False,
) -> Fit:
    """Maximum-likelihood Elo ratings of every player from all counted games.

    ``anchor=None`` pins the average rating of the players with games to ``anchor_rating``;
    a player's name pins that player to it instead. ``players`` fixes the order (and may
    include players without games, who get NaN); by default the players appear in the order
    first seen. ``prior_games`` virtual draws per player, spread over its opponents, keep
    perfect scores finite (0 turns them off: then a perfect score has no finite maximum).
    ``seat_advantage=True`` also fits an Elo bonus for the first seat.
    """
    return fit_tally(
        tally(results, players),
        anchor=anchor,
        anchor_rating=anchor_rating,
        prior_games=prior_games,
        seat_advantage=seat_advantage,
    )
