"""What ``referee bot list --json`` and ``referee bot show`` print: the instructor's view of
every bot version, with its upload and validation facts when it was submitted."""

from __future__ import annotations

from datetime import datetime
from typing import NotRequired, TypedDict

from referee.storage import Repository
from referee.storage import submissions as rows


class GameRow(TypedDict):
    """One game a bot version played, as ``referee bot show --json`` prints it."""

    game_id: str
    tournament: str | None
    seats: list[str]
    result: str
    verdict: str
    reason: str
    finished_at: str | None
    game: str
    kind: str


class VersionRow(TypedDict):
    """One bot version; the upload and validation keys only for a submitted one, and
    ``validation_output`` and ``games`` only in :func:`bot_detail`."""

    bot: str
    version: str
    id: int
    kind: str
    location: str
    content_hash: str | None
    owner: str | None
    registered_at: str | None
    submitted: bool
    status: NotRequired[str]
    reason: NotRequired[str]
    uploaded_at: NotRequired[str | None]
    validated_at: NotRequired[str | None]
    archive_bytes: NotRequired[int]
    unpacked_bytes: NotRequired[int]
    files: NotRequired[int]
    sandbox: NotRequired[str]
    playing: NotRequired[bool]
    validation_game_id: NotRequired[str | None]
    validation_output: NotRequired[str]
    games: NotRequired[list[GameRow]]


class BotDetail(TypedDict):
    """What ``referee bot show --json`` prints."""

    bot: str
    owner: str | None
    versions: list[VersionRow]


def _time(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def version_rows(repo: Repository, bot_name: str | None = None) -> list[VersionRow]:
    """One dict per bot version (oldest first), submission facts included."""
    owners = {p.id: p.name for p in repo.list_players()}
    uploads = {s.bot_version_id: s for s in rows.list_submissions(repo.db, bot_name=bot_name)}
    playing: dict[int, int | None] = {}
    out = []
    for v in repo.list_bot_versions(bot_name):
        row: VersionRow = {
            "bot": v.bot_name,
            "version": v.version,
            "id": v.id,
            "kind": str(v.source_kind),
            "location": v.location,
            "content_hash": v.content_hash,
            "owner": owners.get(v.owner_id) if v.owner_id else None,
            "registered_at": _time(v.created_at),
            "submitted": v.id in uploads,
        }
        sub = uploads.get(v.id)
        if sub is not None:
            if v.bot_id not in playing:
                playing[v.bot_id] = rows.playing_version(repo.db, v.bot_id)
            row.update(
                {
                    "status": sub.status.value,
                    "reason": sub.reason,
                    "uploaded_at": _time(sub.uploaded_at),
                    "validated_at": _time(sub.validated_at),
                    "archive_bytes": sub.archive_bytes,
                    "unpacked_bytes": sub.unpacked_bytes,
                    "files": sub.files,
                    "sandbox": sub.sandbox,
                    "playing": playing[v.bot_id] == v.id,
                    "validation_game_id": sub.validation_game_uid,
                }
            )
        out.append(row)
    return out


def bot_detail(repo: Repository, bot_name: str) -> BotDetail:
    """A bot's versions (with validation output) and every game each version played, its
    validation games included (``kind``: ``rated`` or ``validation``), with each seat's
    output."""
    versions = version_rows(repo, bot_name)
    if not versions:
        from referee.storage import NotFoundError

        raise NotFoundError(f"no bot {bot_name!r}")
    outputs = {
        s.bot_version_id: s.output for s in rows.list_submissions(repo.db, bot_name=bot_name)
    }
    labels = {v.id: v.label for v in repo.list_bot_versions()}
    tournaments = {t.id: t.name for t in repo.list_tournaments()}
    for row in versions:
        if row["submitted"]:
            row["validation_output"] = outputs.get(row["id"], "")
        row["games"] = [
            {
                "game_id": g.uid,
                "tournament": tournaments.get(g.tournament_id) if g.tournament_id else None,
                "seats": [labels.get(s.bot_version_id, "?") for s in g.seats],
                "result": g.result,
                "verdict": g.verdict.value,
                "reason": g.reason,
                "finished_at": _time(g.finished_at),
                "game": g.game,
                "kind": g.kind.value,
            }
            for g in repo.list_games(bot_version_id=row["id"], limit=None, include_validation=True)
        ]
    return {"bot": bot_name, "owner": versions[-1]["owner"], "versions": versions}
