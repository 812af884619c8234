"""Errors raised by the storage layer (all are :class:`StorageError`)."""

from __future__ import annotations

from referee.errors import RefereeError


class StorageError(RefereeError):
    """Base class of every error raised by :mod:`referee.storage`."""


class NotFoundError(StorageError, LookupError):
    """A player, bot, tournament, pairing or game that does not exist."""


class ConflictError(StorageError, ValueError):
    """A write that contradicts what is stored (a duplicate name, a different version body)."""


class DuplicateGameError(ConflictError):
    """A game for a pairing slot that already holds a finished game: it is never counted twice."""

    def __init__(self, pairing_id: int, game_index: int) -> None:
        self.pairing_id = pairing_id
        self.game_index = game_index
        super().__init__(f"pairing {pairing_id} already has a finished game {game_index}")


class PairingStateError(StorageError, ValueError):
    """A pairing asked to do something its status does not allow (e.g. a void pairing)."""


class UnsupportedDatabase(StorageError, ValueError):
    """A database URL of a kind the referee does not run on (only SQLite and PostgreSQL)."""
