"""Who is calling a read service (Arena, Submissions): the player behind the call's token and
their token's role, so that each view shows a caller what is theirs to see.

A call carries ``authorization: Bearer <token>``. A student (or a team) sees their own
versions, games and bot output; the instructor and an admin see everyone's; a call without a
token is the public, who see only rated games. The token check and the role are the stored
token table's (:meth:`Repository.resolve_token <referee.storage.players>`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import grpc

from referee.server.access import Gate
from referee.storage import readers
from referee.storage.enums import GameKind, Role
from referee.storage.games import GameSummary
from referee.storage.players import PlayerInfo
from referee.storage.repository import Repository

#: The request and response types of whichever call a helper serves.
_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")


@dataclass(frozen=True, slots=True)
class Caller:
    """An authenticated caller: their player and their token's role."""

    player: PlayerInfo
    role: Role

    @property
    def sees_all(self) -> bool:
        """Whether this caller may read anyone's validation games and bot output."""
        return readers.is_staff(self.role)


class Callers:
    """Resolves a call's token to a :class:`Caller` (``None``: no token) through the server's
    :class:`~referee.server.access.Gate`: a token that opens nothing ends the call with
    UNAUTHENTICATED (never quietly served as the public), and failed attempts are throttled."""

    def __init__(self, repo: Repository, gate: Gate | None = None) -> None:
        self.repo = repo
        self.gate = gate or Gate(repo)

    async def of(self, context: grpc.aio.ServicerContext[_Req, _Resp]) -> Caller | None:
        caller = await self.gate.caller(context)
        return Caller(caller.info, caller.role) if caller is not None else None


def own_seat(repo: Repository, player: PlayerInfo, summary: GameSummary) -> int | None:
    """The seat ``player``'s bot held in a game (the first, if both), else ``None``."""
    for seat in summary.seats:
        if repo.get_bot_version(seat.bot_version_id).owner_id == player.id:
            return seat.seat
    return None


def may_read_game(repo: Repository, caller: Caller | None, summary: GameSummary) -> bool:
    """Rated games are public; a validation game is its uploader's and the staff's."""
    if summary.kind is GameKind.RATED:
        return True
    if caller is None:
        return False
    owns = own_seat(repo, caller.player, summary) is not None
    return readers.may_read_game(summary.kind, caller.role, owns)


def private_game(game_id: str) -> str:
    """The sentence for a caller who may not read a private (validation) game."""
    return (
        f"game {game_id} is a validation game: only its uploader and the instructor may read "
        f"it (python -m client_sdk mine game {game_id} with the uploader's token)"
    )
