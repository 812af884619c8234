"""Persistent storage: players, tokens, bots, tournaments, pairings, games and ratings.

Typical use::

    from referee.storage import Repository, open_database

    repo = Repository(open_database())          # ./arena.db, or $ARENA_DATABASE_URL
    repo = Repository(open_database("postgresql+psycopg://arena@db:5432/arena"))

See docs/storage.md for the schema and the resume contract.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
    )
    from referee.storage.errors import (
        ConflictError,
        DuplicateGameError,
        NotFoundError,
        PairingStateError,
        StorageError,
    )
    from referee.storage.gametypes import (
        FinishedGame,
        GameDetail,
        GameSummary,
        SeatInfo,
        SeatResult,
    )
    from referee.storage.pairings import PairingInfo, ResumeState
    from referee.storage.players import PlayerInfo, TokenInfo
    from referee.storage.ratings import RatingInput, RatingRow, RatingTable
    from referee.storage.repository import Repository
    from referee.storage.tournaments import TournamentInfo, TournamentSettings

#: Where each public name lives. They are imported on first use (PEP 562), so that a command
#: needing only the name rules or the enums does not pay for SQLAlchemy and the models.
_HOMES = {
    "BotVersionInfo": "referee.storage.bots",
    "ConflictError": "referee.storage.errors",
    "Database": "referee.storage.db",
    "default_url": "referee.storage.db",
    "DuplicateGameError": "referee.storage.errors",
    "FinishedGame": "referee.storage.gametypes",
    "ForfeitPolicy": "referee.storage.enums",
    "GameDetail": "referee.storage.gametypes",
    "GameSummary": "referee.storage.gametypes",
    "MemoryMeasure": "referee.storage.enums",
    "NotFoundError": "referee.storage.errors",
    "open_database": "referee.storage.db",
    "PairingInfo": "referee.storage.pairings",
    "PairingStateError": "referee.storage.errors",
    "PairingStatus": "referee.storage.enums",
    "PlayerInfo": "referee.storage.players",
    "PlayerKind": "referee.storage.enums",
    "RatingInput": "referee.storage.ratings",
    "RatingRow": "referee.storage.ratings",
    "RatingTable": "referee.storage.ratings",
    "Repository": "referee.storage.repository",
    "ResumeState": "referee.storage.pairings",
    "SeatInfo": "referee.storage.gametypes",
    "SeatResult": "referee.storage.gametypes",
    "SourceKind": "referee.storage.enums",
    "StorageError": "referee.storage.errors",
    "TokenInfo": "referee.storage.players",
    "TournamentFormat": "referee.storage.enums",
    "TournamentInfo": "referee.storage.tournaments",
    "TournamentSettings": "referee.storage.tournaments",
    "TournamentStatus": "referee.storage.enums",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


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
    "default_url",
    "open_database",
]
