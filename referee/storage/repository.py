"""The storage API used by the tournament runner, the CLI and the gRPC services.

:class:`Repository` is the one front: it combines the area repositories (players and tokens,
bots, tournaments, pairings, games, ratings), each in its own module and each usable alone
over the same :class:`~referee.storage.db.Database`. Every method is one transaction and
returns plain frozen dataclasses (never ORM objects), so results can cross threads and outlive
sessions. The methods are synchronous; async callers (the ``grpc.aio`` server) run them with
``asyncio.to_thread``.

The resume contract, which the database itself enforces:

* :meth:`Repository.claim_pairing` moves a pairing from ``pending`` to ``running`` only once;
* :meth:`Repository.record_game` writes a game, its seats, its record and its pairing's new
  status in ONE transaction, and refuses a second game for the same ``(pairing, game_index)``
  (a unique constraint, so even two racing runners cannot count a game twice);
* :meth:`Repository.resume_tournament` turns pairings cut off by a crash (``running``) back to
  ``pending`` and says, per pairing, which game indices are finished and which remain.
"""

from __future__ import annotations

from referee.storage.bots import BotRepository
from referee.storage.db import open_database
from referee.storage.games import GameRepository
from referee.storage.pairings import PairingRepository
from referee.storage.players import PlayerRepository
from referee.storage.ratings import RatingRepository
from referee.storage.tournaments import TournamentRepository


class Repository(
    PlayerRepository,
    BotRepository,
    TournamentRepository,
    PairingRepository,
    GameRepository,
    RatingRepository,
):
    """The typed API over one :class:`~referee.storage.db.Database`: every area at once."""

    @classmethod
    def open(cls, url: str | None = None) -> Repository:
        """A repository on :func:`~referee.storage.db.open_database` ``(url)`` (migrated)."""
        return cls(open_database(url))

    def close(self) -> None:
        self.db.close()
