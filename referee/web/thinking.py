"""Who may see a bot's think records (its own search, reported with its moves).

A bot's owner and instructors always see them; everyone else per the server's
``--publish-thinking``: ``never``, ``after-close`` (the default: once the game's tournament has
closed, finished or cancelled; games outside a tournament, such as the ladder's, stay private
to their owners) or ``always``. The rule is applied per seat: a student sees their own bot's
thinking in a game and, until it is published, not the opponent's. Everything that carries a
think record goes through here: the game page, its chart, the JSON API and the record
downloads (which have the hidden seats' records taken out).
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from referee.storage import NotFoundError, readers
from referee.storage.browse import VersionName
from referee.storage.enums import TournamentStatus
from referee.web.security import Session

if TYPE_CHECKING:
    from referee.storage import Repository


class PublishThinking(enum.StrEnum):
    NEVER = "never"
    AFTER_CLOSE = "after-close"
    ALWAYS = "always"


_CLOSED = (TournamentStatus.FINISHED, TournamentStatus.CANCELLED)


def visible_seats(
    policy: PublishThinking,
    me: Session | None,
    players: Sequence[VersionName | None],
    tournament_status: TournamentStatus | None,
) -> frozenset[int]:
    """The seats whose think records ``me`` may see in a game between ``players``."""
    if policy is PublishThinking.ALWAYS:
        return frozenset(range(len(players)))
    if policy is PublishThinking.AFTER_CLOSE and tournament_status in _CLOSED:
        return frozenset(range(len(players)))
    if me is None:
        return frozenset()
    if readers.is_staff(me.role):
        return frozenset(range(len(players)))
    return frozenset(
        seat for seat, p in enumerate(players) if p is not None and p.owner_id == me.player_id
    )


def settled_for_everyone(me: Session | None, tournament_status: TournamentStatus | None) -> bool:
    """Whether every anonymous reader is shown the same of a stored game for good: no
    session, and no open tournament whose close would show more (its think records)."""
    return me is None and (tournament_status is None or tournament_status in _CLOSED)


def tournament_status(repo: Repository, tournament_id: int | None) -> TournamentStatus | None:
    """The game's tournament's status (``None``: no tournament, or it is gone)."""
    if tournament_id is None:
        return None
    try:
        return TournamentStatus(repo.get_tournament(tournament_id).status)
    except NotFoundError:
        return None


# A move's think-record words in a text record's comment (``depth=``... ``text=``).
_SEARCH_WORD = re.compile(r"(?<=[{\s])(?:depth|nodes|score|pv|text)=[^\s{}\\|]+ ?")


def hidden_text(record_text: str, seats: Sequence[int], hidden: frozenset[int]) -> str:
    """A text record with the think records of the ``hidden`` seats' moves taken out.

    ``seats`` is each ply's seat; the record is rewritten from its parsed form, so only the
    think records change."""
    if not hidden:
        return record_text
    from engine.records import read_record, write_record

    try:
        record = read_record(record_text, verify=False)
    except Exception:
        # Unreadable: drop every think word rather than show a hidden one.
        return _SEARCH_WORD.sub("", record_text)
    import dataclasses

    moves = tuple(
        dataclasses.replace(m, search=None) if _seat(seats, i) in hidden else m
        for i, m in enumerate(record.moves)
    )
    return write_record(dataclasses.replace(record, moves=moves))


def hidden_json(
    record_json: Mapping[str, Any], seats: Sequence[int], hidden: frozenset[int]
) -> dict[str, Any]:
    """A JSON record with the think records of the ``hidden`` seats' moves taken out."""
    data: dict[str, Any] = json.loads(json.dumps(record_json))
    if not hidden:
        return data
    for i, move in enumerate(data.get("moves") or []):
        if isinstance(move, dict) and _seat(seats, i) in hidden:
            move.pop("search", None)
    return data


def _seat(seats: Sequence[int], index: int) -> int:
    return seats[index] if index < len(seats) else index % 2
