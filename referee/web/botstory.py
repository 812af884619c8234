"""What a bot's page tells beyond its rating: its results per opponent (with how it lost), each
version's time and memory profile with regressions flagged, and the head-to-head record of
two bots. Read from the stored games (their seats and per-move times), newest
:data:`MAX_GAMES` games of the bot at most; pure functions over :class:`BotGame` rows so the
arithmetic is tested without a server.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from referee.storage import Repository
from referee.storage.browse import VersionName
from referee.storage.enums import GameKind
from referee.storage.models import GameRow, GameSeat

#: The newest games of a bot that its page reads (older ones are in its rating already).
MAX_GAMES = 500
#: A version's median or 95th-percentile move time, or its peak memory, this many times the
#: previous version's is flagged as a regression (with at least MIN_MOVES moves on each side).
REGRESSION_RATIO = 1.5
MIN_MOVES = 20
_MB = 2**20


@dataclass(frozen=True, slots=True)
class BotGame:
    """One game from one of the bot's seats."""

    id: int
    game: str
    finished_at: datetime
    verdict: str
    seat: int
    version_id: int
    opponent_version_id: int
    #: 1, 0.5 or 0 from this bot's side (``None``: aborted).
    score: float | None
    #: The bot was the seat at fault (time, memory, crash...).
    at_fault: bool
    plies: int
    peak_memory_bytes: int | None
    #: This bot's move times in the game (seconds, the referee's measure).
    move_times: tuple[float, ...]


def bot_games(
    repo: Repository, version_ids: Sequence[int], limit: int = MAX_GAMES
) -> list[BotGame]:
    """The bot's rated two-seat games, newest first (one row per seat it held)."""
    ids = list(version_ids)
    if not ids:
        return []
    seated = select(GameSeat.game_id).where(GameSeat.bot_version_id.in_(ids))
    query = (
        select(
            GameRow.id,
            GameRow.game,
            GameRow.finished_at,
            GameRow.verdict,
            GameRow.winner_seat,
            GameRow.offender_seat,
            GameRow.plies,
            GameRow.moves,
        )
        .where(GameRow.kind == GameKind.RATED.value, GameRow.id.in_(seated))
        .order_by(GameRow.finished_at.desc(), GameRow.id.desc())
        .limit(limit)
    )
    with repo.db.read() as s:
        rows = list(s.execute(query))
        seats: dict[int, dict[int, tuple[int, int | None]]] = {}
        if rows:
            seat_query = select(
                GameSeat.game_id, GameSeat.seat, GameSeat.bot_version_id, GameSeat.peak_memory_bytes
            ).where(GameSeat.game_id.in_([r[0] for r in rows]))
            for gid, seat, vid, peak in s.execute(seat_query):
                seats.setdefault(gid, {})[seat] = (vid, peak)
    return _games_of(rows, seats, set(ids))


def _games_of(
    rows: Sequence[Any], seats: Mapping[int, Mapping[int, tuple[int, int | None]]], ids: set[int]
) -> list[BotGame]:
    """One :class:`BotGame` per seat of ``ids`` in each two-seat game row."""
    out = []
    for gid, game, finished, verdict, winner, offender, plies, moves in rows:
        pair = seats.get(gid, {})
        if set(pair) != {0, 1}:
            continue
        for seat in (0, 1):
            vid, peak = pair[seat]
            if vid not in ids:
                continue
            score = (
                None if verdict == "aborted" else 0.5 if winner is None else float(winner == seat)
            )
            times = tuple(
                float(m["measured_s"])
                for m in moves or ()
                if isinstance(m, Mapping) and m.get("seat") == seat and m.get("measured_s")
            )
            out.append(
                BotGame(
                    gid,
                    game,
                    finished,
                    verdict,
                    seat,
                    vid,
                    pair[1 - seat][0],
                    score,
                    offender == seat,
                    int(plies),
                    peak,
                    times,
                )
            )
    return out


@dataclass(frozen=True, slots=True)
class Matchup:
    """The bot's record against one opponent bot (all versions of each)."""

    opponent: VersionName
    games: int
    wins: int
    draws: int
    losses: int
    crashes: int
    time_losses: int
    plies: int

    @property
    def score_pct(self) -> float:
        return 100.0 * (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0

    @property
    def crash_pct(self) -> float:
        return 100.0 * self.crashes / self.games if self.games else 0.0

    @property
    def time_loss_pct(self) -> float:
        return 100.0 * self.time_losses / self.games if self.games else 0.0

    @property
    def average_plies(self) -> float:
        return self.plies / self.games if self.games else 0.0


CRASH_VERDICTS = frozenset({"runtime_error", "memory", "protocol_error", "disconnect"})


def matchups(games: Sequence[BotGame], names: Mapping[int, VersionName]) -> list[Matchup]:
    """One row per opponent bot, most games first (aborted games left out)."""
    acc: dict[int, list[int]] = {}
    shown: dict[int, VersionName] = {}
    for g in games:
        opponent = names.get(g.opponent_version_id)
        if g.score is None or opponent is None:
            continue
        shown.setdefault(opponent.bot_id, opponent)
        row = acc.setdefault(opponent.bot_id, [0] * 7)
        row[0] += 1
        row[1] += g.score == 1.0
        row[2] += g.score == 0.5
        row[3] += g.score == 0.0
        row[4] += g.at_fault and g.verdict in CRASH_VERDICTS
        row[5] += g.at_fault and g.verdict == "time"
        row[6] += g.plies
    rows = [Matchup(shown[bot], *counts) for bot, counts in acc.items()]
    rows.sort(key=lambda m: (-m.games, m.opponent.display.lower()))
    return rows


@dataclass(frozen=True, slots=True)
class TimeProfile:
    """One version's move times and memory; ``regression`` says what got worse, if anything."""

    version: VersionName
    games: int
    moves: int
    median_s: float | None
    p95_s: float | None
    peak_mb: float | None
    regression: str = ""


def _p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def time_profiles(games: Sequence[BotGame], versions: Sequence[VersionName]) -> list[TimeProfile]:
    """Per version, oldest first; a version is compared with the previous one that moved."""
    out: list[TimeProfile] = []
    previous: TimeProfile | None = None
    for version in sorted(versions, key=lambda v: v.id):
        mine = [g for g in games if g.version_id == version.id]
        times = [t for g in mine for t in g.move_times]
        peaks = [g.peak_memory_bytes for g in mine if g.peak_memory_bytes]
        profile = TimeProfile(
            version,
            len(mine),
            len(times),
            statistics.median(times) if times else None,
            _p95(times) if times else None,
            max(peaks) / _MB if peaks else None,
        )
        if previous is not None and profile.moves >= MIN_MOVES and previous.moves >= MIN_MOVES:
            profile = _flagged(profile, previous)
        if profile.moves:
            previous = profile
        out.append(profile)
    return out


def _flagged(now: TimeProfile, before: TimeProfile) -> TimeProfile:
    worse = []
    for label, a, b, unit in (
        ("median move time", now.median_s, before.median_s, "s"),
        ("95th percentile move time", now.p95_s, before.p95_s, "s"),
        ("peak memory", now.peak_mb, before.peak_mb, "MB"),
    ):
        if a is not None and b and a >= REGRESSION_RATIO * b:
            worse.append(f"{label} {b:.3g} → {a:.3g} {unit} ({a / b:.1f}x)")
    if not worse:
        return now
    text = f"slower than {before.version.version}: " + "; ".join(worse)
    return TimeProfile(
        now.version, now.games, now.moves, now.median_s, now.p95_s, now.peak_mb, text
    )


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """Every game between two bots (from the first bot's side)."""

    games: tuple[BotGame, ...]
    #: (first bot's version id, second bot's version id) -> [wins, draws, losses].
    cross: Mapping[tuple[int, int], tuple[int, int, int]]
    #: The first bot's score by its seat: seat -> (points, games).
    by_seat: Mapping[int, tuple[float, int]]

    @property
    def points(self) -> float:
        return sum(g.score or 0.0 for g in self.games if g.score is not None)


def head_to_head(games: Sequence[BotGame], other_versions: Sequence[int]) -> HeadToHead:
    """``games`` (the first bot's) against any of ``other_versions``."""
    others = set(other_versions)
    mine = tuple(g for g in games if g.opponent_version_id in others and g.score is not None)
    cross: dict[tuple[int, int], list[int]] = {}
    seats: dict[int, list[float]] = {}
    for g in mine:
        cell = cross.setdefault((g.version_id, g.opponent_version_id), [0, 0, 0])
        cell[0 if g.score == 1.0 else 1 if g.score == 0.5 else 2] += 1
        seat = seats.setdefault(g.seat, [0.0, 0.0])
        seat[0] += g.score or 0.0
        seat[1] += 1
    return HeadToHead(
        mine,
        {k: (v[0], v[1], v[2]) for k, v in cross.items()},
        {k: (v[0], int(v[1])) for k, v in seats.items()},
    )
