"""What the tournament, bot and versus pages are made of: one shape for their HTML templates
and their JSON (:mod:`referee.web.api`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from markupsafe import Markup

    from referee.ratings import Leaderboard
    from referee.storage import BotVersionInfo, TournamentInfo
    from referee.storage.browse import GameLine, VersionName
    from referee.web.botstory import HeadToHead, Matchup, TimeProfile
    from referee.web.tables import BoardRow, OpponentLine


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a tournament is: its games finished, remaining, planned and running."""

    finished: int
    remaining: int
    planned: int
    running: int

    @property
    def percent(self) -> float:
        return 100.0 * self.finished / self.planned if self.planned else 0.0


class TournamentData(TypedDict):
    """A tournament: its standings, each entrant's names (by label) and its progress."""

    t: TournamentInfo
    board: Leaderboard
    players: list[str]
    names: dict[str, VersionName | None]
    progress: Progress
    #: Each two neighbours in the table and the likelihood the upper one is stronger.
    order: list[tuple[str, str, float | None]]
    #: The adaptive format's confidence (``None`` for the other formats).
    confidence: float | None


class BotGameData(TypedDict):
    """One game a bot plays: its rows in the table, its rating plot, how it fared."""

    game: str
    rows: list[BoardRow]
    plot: Markup
    opponents: list[OpponentLine]
    matchups: list[Matchup]
    profiles: list[TimeProfile]


class BotData(TypedDict):
    """A bot: its versions (newest first, with their stored facts), its games."""

    bot: VersionName
    versions: list[tuple[VersionName, BotVersionInfo | None]]
    per_game: list[BotGameData]
    recent: list[GameLine]
    names: Mapping[int, VersionName]
    #: The author's other bots (a remote bot and uploads are separate bots), with their kind.
    same_author: list[tuple[VersionName, str]]


class VersusData(TypedDict):
    """Every game between two bots, from the first bot's side."""

    a: VersionName
    b: VersionName
    a_versions: list[VersionName]
    b_versions: list[VersionName]
    h2h: HeadToHead
    names: Mapping[int, VersionName]
    seat_names: list[tuple[int, str]]
