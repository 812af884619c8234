"""The live ladder: a Bayesian rating (openskill) updated game by game between tournaments.

Each player has a skill estimate ``mu`` and an uncertainty ``sigma`` (openskill's scale: a new
player starts at mu 25, sigma 25/3). The ladder ranks by the conservative estimate
``mu - 3 * sigma``, so a newcomer with a lucky start does not jump over established bots, and
marks a player "provisional" while ``sigma`` is above :data:`PROVISIONAL_SIGMA`: 6.0, about
70% of the starting 25/3, which a newcomer reaches after about seven games against
established opponents (or one cycle of a 10-bot round robin, 18 games, among newcomers).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from openskill.models import BradleyTerryFull, PlackettLuce

from referee.ratings.results import GameResult

PROVISIONAL_SIGMA = 6.0
ModelName = Literal["bradley_terry_full", "plackett_luce"]


@dataclass(frozen=True, slots=True)
class LadderRow:
    rank: int
    player: str
    mu: float
    sigma: float
    games: int
    provisional: bool

    @property
    def ordinal(self) -> float:
        """The conservative skill the ladder ranks by: ``mu - 3 sigma``."""
        return self.mu - 3.0 * self.sigma

    def as_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "player": self.player,
            "mu": self.mu,
            "sigma": self.sigma,
            "ordinal": self.ordinal,
            "games": self.games,
            "provisional": self.provisional,
        }


class Ladder:
    """Ratings that change with every recorded game (order matters, unlike the MLE fit).

    The state is plain numbers (:meth:`to_dict` / :meth:`from_dict`) so storage can persist
    it as a rating snapshot.
    """

    def __init__(
        self,
        model: ModelName = "bradley_terry_full",
        provisional_sigma: float = PROVISIONAL_SIGMA,
    ) -> None:
        if model == "bradley_terry_full":
            self._model: BradleyTerryFull | PlackettLuce = BradleyTerryFull()
        elif model == "plackett_luce":
            self._model = PlackettLuce()
        else:
            raise ValueError(f"unknown openskill model {model!r}")
        self.model_name: ModelName = model
        self.provisional_sigma = provisional_sigma
        self._ratings: dict[str, tuple[float, float]] = {}
        self._games: dict[str, int] = {}

    def add_player(self, player: str) -> None:
        """Register a player at the model's starting rating (recording a game does this too)."""
        if player not in self._ratings:
            start = self._model.rating()
            self._ratings[player] = (float(start.mu), float(start.sigma))
            self._games[player] = 0

    def record(self, result: GameResult) -> None:
        """Update both players with one game; a voided game changes nothing."""
        self.add_player(result.first)
        self.add_player(result.second)
        if not result.counted:
            return
        # openskill ranks: lower is better, equal ranks are a draw.
        ranks = {1.0: [0.0, 1.0], 0.5: [0.0, 0.0], 0.0: [1.0, 0.0]}[result.score]
        (mu_a, sigma_a), (mu_b, sigma_b) = self._ratings[result.first], self._ratings[result.second]
        if isinstance(self._model, BradleyTerryFull):
            bt = self._model
            [[ra], [rb]] = bt.rate(
                [[bt.rating(mu_a, sigma_a)], [bt.rating(mu_b, sigma_b)]], ranks=ranks
            )
            new_a, new_b = (ra.mu, ra.sigma), (rb.mu, rb.sigma)
        else:
            pl = self._model
            [[pa], [pb]] = pl.rate(
                [[pl.rating(mu_a, sigma_a)], [pl.rating(mu_b, sigma_b)]], ranks=ranks
            )
            new_a, new_b = (pa.mu, pa.sigma), (pb.mu, pb.sigma)
        self._ratings[result.first] = (float(new_a[0]), float(new_a[1]))
        self._ratings[result.second] = (float(new_b[0]), float(new_b[1]))
        self._games[result.first] += 1
        self._games[result.second] += 1

    def record_all(self, results: Iterable[GameResult]) -> None:
        for r in results:
            self.record(r)

    def rating(self, player: str) -> tuple[float, float]:
        """``(mu, sigma)`` of ``player``."""
        return self._ratings[player]

    def standings(self) -> list[LadderRow]:
        """Every player, best ``mu - 3 sigma`` first."""
        order = sorted(
            self._ratings,
            key=lambda p: (-(self._ratings[p][0] - 3.0 * self._ratings[p][1]), p),
        )
        return [
            LadderRow(
                rank=i,
                player=p,
                mu=self._ratings[p][0],
                sigma=self._ratings[p][1],
                games=self._games[p],
                provisional=self._ratings[p][1] > self.provisional_sigma,
            )
            for i, p in enumerate(order, start=1)
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model_name,
            "provisional_sigma": self.provisional_sigma,
            "players": {
                p: {"mu": mu, "sigma": sigma, "games": self._games[p]}
                for p, (mu, sigma) in self._ratings.items()
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Ladder:
        ladder = cls(data["model"], float(data["provisional_sigma"]))
        for p, v in data["players"].items():
            ladder._ratings[p] = (float(v["mu"]), float(v["sigma"]))
            ladder._games[p] = int(v["games"])
        return ladder
