"""Which version of each submitted bot a tournament plays, fixed once before its first game.

A submitted bot (one whose versions were uploaded, see :mod:`referee.submissions`) plays its
latest *accepted* version. With ``referee tournament create ... --entries-close TIME`` it plays
the latest version accepted among those uploaded by TIME, and the tournament cannot start
before then. Without a deadline the versions are fixed when the tournament starts. Either way
they are written into the tournament's entries before any pairing is made, so every game of
the tournament (and its stored seats) names the exact version that played; an entrant with no
accepted version is withdrawn. Bots registered from paths or connecting remotely are left as
they were entered.
"""

from __future__ import annotations

from datetime import UTC, datetime

from referee.storage import Repository
from referee.storage import submissions as rows
from referee.storage.submissions import EntryChange
from referee.telemetry.logs import get_logger

log = get_logger("referee.tournament.entries")


def settle_entries(
    repo: Repository, tournament_id: int, now: datetime | None = None
) -> list[EntryChange]:
    """Fix the versions submitted bots play (see the module docstring); what changed."""
    now = now or datetime.now(UTC)
    close = rows.entries_close(repo.db, tournament_id)
    if close is not None and now < close:
        raise ValueError(
            f"entries are open until {close.isoformat().replace('+00:00', 'Z')}: "
            "the tournament can start after that"
        )
    if repo.pairings(tournament_id):
        return []  # already started: its versions were fixed then
    changes = rows.freeze_entries(repo.db, tournament_id, close or now)
    for change in changes:
        log.info("entry_settled", bot=change.bot_name, entered=change.old, plays=change.new or "-")
    return changes


def parse_time(text: str) -> datetime:
    """An ISO 8601 time (``2026-12-01T18:00``, ``...Z``, ``...+10:00``; no zone: UTC) or
    ``now``."""
    if text.strip().lower() == "now":
        return datetime.now(UTC)
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO 8601 time (e.g. 2026-12-01T18:00Z)") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
