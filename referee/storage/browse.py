"""Read-only queries for browsing (the web front): whole-table scans done column by column.

The repository's own methods load ORM objects one game at a time, which is right for a game
page and far too slow for a leaderboard of 100,000 games; these read plain columns instead and
return small frozen dataclasses. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select

from engine.adjudication.verdicts import Verdict
from referee.storage.enums import GameKind, SourceKind
from referee.storage.models import Bot, BotVersion, GameRow, GameSeat, Player
from referee.storage.repository import Repository


@dataclass(frozen=True, slots=True)
class VersionName:
    """How a bot version is named on a page: the bot's registered name (unique, and what the
    CLI and the API call it) plus its version. A bot a student's client registered already
    names its owner (``alice/my_bot``, an upload ``alice-my_bot``); the owner is not added
    again."""

    id: int
    bot_id: int
    bot: str
    version: str
    owner: str | None
    owner_id: int | None
    #: A command bot (a C++ or JavaScript upload, a ``cmd:`` bot): replayed on a laptop with
    #: ``reproduce PACK -- COMMAND...`` rather than ``reproduce PACK BOT``.
    command: bool = False

    @property
    def label(self) -> str:
        """``bot@version``: the rating code's name for this version."""
        return f"{self.bot}@{self.version}"

    @property
    def display(self) -> str:
        return self.bot


@dataclass(frozen=True, slots=True)
class PlayedGame:
    """One stored two-seat game as the tables need it (no moves, no record)."""

    id: int
    game: str
    tournament_id: int | None
    first: int
    second: int
    winner_seat: int | None
    verdict: str
    voided: bool
    finished_at: datetime


@dataclass(frozen=True, slots=True)
class GameLine:
    """A game in a list: who played, how it ended."""

    id: int
    uid: str
    game: str
    tournament_id: int | None
    result: str
    verdict: str
    reason: str
    plies: int
    voided: bool
    finished_at: datetime
    #: Bot version id per seat.
    seats: tuple[int, ...]


def data_mark(repo: Repository) -> tuple[int, int, int]:
    """``(highest game id, number of games, highest bot version id)``: changes whenever a game
    is stored or removed or a version is added, so a cache built from them knows when it is
    stale. Cheap on both backends."""
    with repo.db.read() as s:
        row = s.execute(select(func.max(GameRow.id), func.count(GameRow.id))).one()
        version = s.scalar(select(func.max(BotVersion.id)))
        return int(row[0] or 0), int(row[1] or 0), int(version or 0)


def version_names(repo: Repository, only: Collection[int] | None = None) -> dict[int, VersionName]:
    """Every bot version (or ``only`` those ids) with its bot's and owner's names, by id."""
    query = (
        select(
            BotVersion.id,
            Bot.id,
            Bot.name,
            BotVersion.version,
            Player.name,
            Bot.owner_id,
            BotVersion.source_kind,
        )
        .join(Bot, BotVersion.bot_id == Bot.id)
        .outerjoin(Player, Bot.owner_id == Player.id)
    )
    if only is not None:
        query = query.where(BotVersion.id.in_(sorted(only)))
    command = SourceKind.COMMAND.value
    with repo.db.read() as s:
        return {
            vid: VersionName(vid, bid, bot, version, owner, owner_id, kind == command)
            for vid, bid, bot, version, owner, owner_id, kind in s.execute(query)
        }


def played_games(repo: Repository) -> list[PlayedGame]:
    """Every two-seat rated game that was not aborted, oldest first (voided forfeits
    included, marked; validation games are never rated)."""
    games = select(
        GameRow.id,
        GameRow.game,
        GameRow.tournament_id,
        GameRow.winner_seat,
        GameRow.verdict,
        GameRow.voided,
        GameRow.finished_at,
    ).where(GameRow.verdict != Verdict.ABORTED.value, GameRow.kind == GameKind.RATED.value)
    seats = (
        select(GameSeat.game_id, GameSeat.seat, GameSeat.bot_version_id)
        .join(GameRow, GameSeat.game_id == GameRow.id)
        .where(GameRow.verdict != Verdict.ABORTED.value, GameRow.kind == GameKind.RATED.value)
    )
    with repo.db.read() as s:
        by_game: dict[int, list[int | None]] = {}
        for game_id, seat, version_id in s.execute(seats):
            slots = by_game.setdefault(game_id, [None, None])
            if seat in (0, 1):
                slots[seat] = version_id
        out = []
        for gid, game, tid, winner, verdict, voided, finished in s.execute(games):
            pair = by_game.get(gid)
            if pair is None or pair[0] is None or pair[1] is None or pair[0] == pair[1]:
                continue
            out.append(
                PlayedGame(gid, game, tid, pair[0], pair[1], winner, verdict, voided, finished)
            )
    out.sort(key=lambda g: (g.finished_at, g.id))
    return out


def recent_games(
    repo: Repository,
    version_ids: Sequence[int] = (),
    *,
    game: str | None = None,
    limit: int = 50,
) -> list[GameLine]:
    """Public (rated) games newest first; of these bot versions when given."""
    query = select(
        GameRow.id,
        GameRow.uid,
        GameRow.game,
        GameRow.tournament_id,
        GameRow.result,
        GameRow.verdict,
        GameRow.reason,
        GameRow.plies,
        GameRow.voided,
        GameRow.finished_at,
    ).where(GameRow.kind == GameKind.RATED.value)
    if version_ids:
        seated = select(GameSeat.game_id).where(GameSeat.bot_version_id.in_(list(version_ids)))
        query = query.where(GameRow.id.in_(seated))
    if game is not None:
        query = query.where(GameRow.game == game)
    query = query.order_by(GameRow.finished_at.desc(), GameRow.id.desc()).limit(limit)
    with repo.db.read() as s:
        rows = list(s.execute(query))
        ids = [r[0] for r in rows]
        seats: dict[int, dict[int, int]] = {}
        if ids:
            seat_query = select(GameSeat.game_id, GameSeat.seat, GameSeat.bot_version_id).where(
                GameSeat.game_id.in_(ids)
            )
            for gid, seat, vid in s.execute(seat_query):
                seats.setdefault(gid, {})[seat] = vid
    return [
        GameLine(
            gid,
            uid,
            name,
            tid,
            result,
            verdict,
            reason,
            plies,
            voided,
            finished,
            tuple(v for _, v in sorted(seats.get(gid, {}).items())),
        )
        for gid, uid, name, tid, result, verdict, reason, plies, voided, finished in rows
    ]


def bot_ids_owned_by(repo: Repository, player_id: int) -> list[int]:
    """The ids of the bots a player owns."""
    with repo.db.read() as s:
        return list(s.scalars(select(Bot.id).where(Bot.owner_id == player_id).order_by(Bot.name)))


def source_kinds(repo: Repository, version_ids: Collection[int]) -> dict[int, SourceKind]:
    """How each of these bot versions runs (remote, uploaded...), in one query."""
    if not version_ids:
        return {}
    query = select(BotVersion.id, BotVersion.source_kind).where(
        BotVersion.id.in_(sorted(version_ids))
    )
    with repo.db.read() as s:
        return {vid: SourceKind(kind) for vid, kind in s.execute(query)}
