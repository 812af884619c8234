"""Persistent storage: players, tokens, bots, tournaments, pairings, games and ratings.

Typical use::

    from referee.storage import Repository, open_database

    repo = Repository(open_database())          # ./arena.db, or $ARENA_DATABASE_URL
    repo = Repository(open_database("postgresql+psycopg://arena@db:5432/arena"))

See docs/storage.md for the schema and the resume contract.
"""

from referee.storage.bots import BotVersionInfo
from referee.storage.db import Database, default_url, open_database
from referee.storage.enums import (
    ForfeitPolicy,
    MemoryMeasure,
    PairingStatus,
    PlayerKind,
    SourceKind,
    TournamentFormat,
    TournamentStatus,
    Verdict,
)
from referee.storage.errors import (
    ConflictError,
    DuplicateGameError,
    NotFoundError,
    PairingStateError,
    StorageError,
)
from referee.storage.games import FinishedGame, GameDetail, GameSummary, SeatInfo, SeatResult
from referee.storage.pairings import PairingInfo, ResumeState
from referee.storage.players import PlayerInfo, TokenInfo
from referee.storage.ratings import RatingInput, RatingRow, RatingTable
from referee.storage.repository import Repository
from referee.storage.tournaments import TournamentInfo, TournamentSettings

__all__ = [
    "BotVersionInfo",
    "ConflictError",
    "Database",
    "DuplicateGameError",
    "FinishedGame",
    "ForfeitPolicy",
    "GameDetail",
    "GameSummary",
    "MemoryMeasure",
    "NotFoundError",
    "PairingInfo",
    "PairingStateError",
    "PairingStatus",
    "PlayerInfo",
    "PlayerKind",
    "RatingInput",
    "RatingRow",
    "RatingTable",
    "Repository",
    "ResumeState",
    "SeatInfo",
    "SeatResult",
    "SourceKind",
    "StorageError",
    "TokenInfo",
    "TournamentFormat",
    "TournamentInfo",
    "TournamentSettings",
    "TournamentStatus",
    "Verdict",
    "default_url",
    "open_database",
]
