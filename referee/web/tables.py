"""The tables behind the pages, computed from storage and kept until a game is stored.

Fitting 500 bots over 100,000 games takes seconds, rendering the result takes milliseconds: the
fit runs in a worker thread when the games change (checked at most once per ``min_interval``),
and pages render from the last finished snapshot meanwhile (stale-while-revalidate). Only the
very first request waits for a build.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from referee.ratings import GameResult, Ladder, Row, build_leaderboard
from referee.ratings.elo import DEFAULT_INITIAL, update

# The templates' threshold, re-exported from the one place it is decided.
from referee.ratings.groups import PROVISIONAL_GAMES as PROVISIONAL_GAMES
from referee.ratings.groups import provisional_reason
from referee.storage import Repository
from referee.storage.browse import (
    PlayedGame,
    VersionName,
    data_mark,
    played_games,
    version_names,
)
from referee.storage.games import rated_result

#: Games listed first, in this order; any other registered game follows alphabetically.
GAME_ORDER = ("tetress", "att")


#: The figures of a rating table's row the web's JSON shows as they are, in this order.
_RATED = ("elo", "ci95", "elo_incremental", "games", "wins", "draws", "losses", "score_pct")


@dataclass(frozen=True, slots=True)
class BoardRow:
    """A leaderboard line: the rating table's row (its player a version id; ``rank`` within
    its connected group, 1 the largest) and the version it is."""

    row: Row
    version: VersionName

    @property
    def provisional(self) -> bool:
        return self.provisional_reason is not None or self.row.elo is None

    @property
    def provisional_reason(self) -> str | None:
        return provisional_reason(self.row.games)

    def as_dict(self) -> dict[str, object]:
        rated = self.row.as_dict()
        return {
            "rank": self.row.rank,
            "bot_version_id": self.version.id,
            "bot_id": self.version.bot_id,
            "owner": self.version.owner,
            "bot": self.version.bot,
            "version": self.version.version,
            **{key: rated[key] for key in _RATED},
            "provisional": self.provisional,
            "provisional_reason": self.provisional_reason,
            "group": self.row.group,
            "forfeits": dict(self.row.forfeits),
        }


@dataclass(frozen=True, slots=True)
class LadderLine:
    rank: int
    version: VersionName
    mu: float
    sigma: float
    ordinal: float
    games: int
    provisional: bool

    def as_dict(self) -> dict[str, object]:
        return {
            "rank": self.rank,
            "bot_version_id": self.version.id,
            "owner": self.version.owner,
            "bot": self.version.bot,
            "version": self.version.version,
            "mu": self.mu,
            "sigma": self.sigma,
            "ordinal": self.ordinal,
            "games": self.games,
            "provisional": self.provisional,
        }


@dataclass(frozen=True, slots=True)
class GameTable:
    """One game's leaderboard, ladder, and what bot pages need from the same games."""

    game: str
    rows: tuple[BoardRow, ...]
    anchor: str
    games: int
    ladder: tuple[LadderLine, ...]
    results: tuple[PlayedGame, ...]
    #: version id -> (finished_at, incremental Elo after that game), oldest first.
    history: Mapping[int, Sequence[tuple[datetime, float]]]
    #: Connected groups of rated bots: ratings compare only within one.
    groups: int = 1

    def row_of(self, version_id: int) -> BoardRow | None:
        for row in self.rows:
            if row.version.id == version_id:
                return row
        return None


@dataclass(frozen=True, slots=True)
class Snapshot:
    mark: tuple[int, int, int]
    names: Mapping[int, VersionName]
    tables: Mapping[str, GameTable]
    built_at: float
    build_s: float

    def ordered_games(self) -> list[str]:
        known = [g for g in GAME_ORDER if g in self.tables]
        return known + sorted(g for g in self.tables if g not in GAME_ORDER)

    def same_author(self) -> dict[int, list[VersionName]]:
        """For each bot of an author with more than one bot (a student's remote bot and their
        uploads are separate bots), that author's other bots, newest version each, by name."""
        newest: dict[int, VersionName] = {}
        for name in self.names.values():
            held = newest.get(name.bot_id)
            if held is None or name.id > held.id:
                newest[name.bot_id] = name
        by_owner: dict[int, list[VersionName]] = {}
        for name in sorted(newest.values(), key=lambda n: n.display.lower()):
            if name.owner_id is not None:
                by_owner.setdefault(name.owner_id, []).append(name)
        return {
            name.bot_id: [other for other in bots if other.bot_id != name.bot_id]
            for bots in by_owner.values()
            if len(bots) > 1
            for name in bots
        }


@dataclass
class Tables:
    """The snapshot cache over ``repo`` (thread-safe; call :meth:`snapshot` off the loop)."""

    repo: Repository
    min_interval: float = 1.0
    _snapshot: Snapshot | None = None
    _checked: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _building: bool = False

    def snapshot(self) -> Snapshot:
        """The newest finished snapshot; starts a rebuild when the games have changed."""
        current = self._snapshot
        now = time.monotonic()
        if current is not None and now - self._checked < self.min_interval:
            return current
        self._checked = now
        mark = data_mark(self.repo)
        if current is not None and mark == current.mark:
            return current
        if current is None:
            with self._lock:
                if self._snapshot is None:
                    self._snapshot = build_snapshot(self.repo, mark)
                return self._snapshot
        self._rebuild_in_background(mark)
        return current

    def names_for(self, ids: Iterable[int]) -> Mapping[int, VersionName]:
        """Names for these bot versions: the snapshot's, and the database's for a version the
        snapshot predates (a bot that registered a moment ago, whose first game was just
        stored), so a game is never shown with a player nameless."""
        names = self.snapshot().names
        missing = {i for i in ids if i not in names}
        if not missing:
            return names
        return {**names, **version_names(self.repo, only=missing)}

    def _rebuild_in_background(self, mark: tuple[int, int, int]) -> None:
        with self._lock:
            if self._building:
                return
            self._building = True

        def work() -> None:
            try:
                self._snapshot = build_snapshot(self.repo, mark)
            finally:
                self._building = False

        threading.Thread(target=work, name="web-tables", daemon=True).start()

    def refresh(self) -> Snapshot:
        """Rebuild now (tests, benchmarks)."""
        self._snapshot = build_snapshot(self.repo, data_mark(self.repo))
        self._checked = time.monotonic()
        return self._snapshot


def build_snapshot(repo: Repository, mark: tuple[int, int, int]) -> Snapshot:
    started = time.perf_counter()
    names = version_names(repo)
    by_game: dict[str, list[PlayedGame]] = {}
    for g in played_games(repo):
        by_game.setdefault(g.game, []).append(g)
    tables = {game: build_table(game, games, names) for game, games in by_game.items()}
    return Snapshot(mark, names, tables, time.time(), time.perf_counter() - started)


def _result(g: PlayedGame) -> GameResult:
    return rated_result(str(g.first), str(g.second), g.winner_seat, g.verdict, voided=g.voided)


def build_table(
    game: str, games: Sequence[PlayedGame], names: Mapping[int, VersionName]
) -> GameTable:
    """The leaderboard, ladder and rating histories of one game (players keyed by version id)."""
    # A voided game without a forfeit (none should exist) has nothing to count.
    kept = [g for g in games if not (g.voided and g.winner_seat is None)]
    results = [_result(g) for g in kept]
    board = build_leaderboard(results)
    rows = tuple(BoardRow(r, names[int(r.player)]) for r in board.rows if int(r.player) in names)
    ladder = Ladder()
    ladder.record_all(results)
    lines = tuple(
        LadderLine(r.rank, names[int(r.player)], r.mu, r.sigma, r.ordinal, r.games, r.provisional)
        for r in ladder.standings()
        if int(r.player) in names
    )
    return GameTable(
        game, rows, board.anchor, board.fit.games, lines, tuple(kept), _history(kept), board.groups
    )


def _history(games: Sequence[PlayedGame]) -> dict[int, list[tuple[datetime, float]]]:
    """Each version's incremental Elo after each of its counted games, in the order played."""
    ratings: dict[int, float] = {}
    history: dict[int, list[tuple[datetime, float]]] = {}
    for g in games:
        if g.voided:
            continue
        a = ratings.get(g.first, DEFAULT_INITIAL)
        b = ratings.get(g.second, DEFAULT_INITIAL)
        score = 0.5 if g.winner_seat is None else (1.0 if g.winner_seat == 0 else 0.0)
        a, b = update(a, b, score)
        ratings[g.first], ratings[g.second] = a, b
        history.setdefault(g.first, []).append((g.finished_at, a))
        history.setdefault(g.second, []).append((g.finished_at, b))
    return history


@dataclass(frozen=True, slots=True)
class OpponentLine:
    opponent: VersionName
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score_pct(self) -> float:
        return 100.0 * (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0


def results_by_opponent(
    table: GameTable, version_ids: set[int], names: Mapping[int, VersionName]
) -> list[OpponentLine]:
    """The bot's counted results against each opponent version, most games first."""
    tally: dict[int, list[int]] = {}
    for g in table.results:
        if g.voided:
            continue
        for seat, (me, them) in enumerate(((g.first, g.second), (g.second, g.first))):
            if me not in version_ids or them in version_ids:
                continue
            wdl = tally.setdefault(them, [0, 0, 0])
            if g.winner_seat is None:
                wdl[1] += 1
            elif g.winner_seat == seat:
                wdl[0] += 1
            else:
                wdl[2] += 1
    lines = [OpponentLine(names[o], *wdl) for o, wdl in tally.items() if o in names]
    return sorted(lines, key=lambda line: (-line.games, line.opponent.display))
