"""What the Submissions service shows a caller: their versions, their games (validation games
included), one game's record, and a bot's captured output, each within what the caller's role
may see (:mod:`referee.rpc.callers`).

Every function is synchronous (the service runs it in a worker thread) and raises
:class:`PermissionError` with the caller's sentence, or the storage's ``NotFoundError``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable

from client_sdk.proto import submissions_pb2 as spb
from referee.rpc.callers import Caller, may_read_game, own_seat, private_game
from referee.rpc.calls import wire_time
from referee.server import bounds
from referee.storage import (
    BotVersionInfo,
    GameSummary,
    NotFoundError,
    PlayerInfo,
    Repository,
    SourceKind,
)
from referee.storage import submissions as rows
from referee.storage.enums import SubmissionStatus
from referee.storage.submissions import SubmissionInfo
from referee.submissions.validation_queue import Position


def list_mine(
    repo: Repository,
    caller: Caller,
    player_name: str = "",
    where: Callable[[int], Position] | None = None,
) -> spb.ListMineResponse:
    """The caller's versions and games, or (staff only) another player's; ``where``: each
    version's position in the server's validation queue."""
    player = caller.player
    bounds.bounded(player_name, "player", bounds.MAX_REF_CHARS)
    if player_name and player_name != player.name:
        if not caller.sees_all:
            raise PermissionError(
                "you may list only your own versions and games (the instructor sees everyone's)"
            )
        player = repo.get_player(player_name)
    versions = repo.list_bot_versions()
    own = {v.bot_id for v in versions if v.owner_id == player.id}
    playing = {rows.playing_version(repo.db, bot_id) for bot_id in own}
    reply = spb.ListMineResponse(player=player.name)
    reply.versions.extend(
        _version_view(s, s.bot_version_id in playing, where)
        for s in rows.list_submissions(repo.db, owner=player.name)
    )
    reply.games.extend(_games_of(repo, player))
    return reply


def _games_of(repo: Repository, player: PlayerInfo) -> list[spb.MyGame]:
    versions = repo.list_bot_versions()
    labels = {v.id: v.label for v in versions}
    own = {v.id for v in versions if v.owner_id == player.id}
    commands = _commands(versions)
    tournaments = {t.id: t.name for t in repo.list_tournaments()}
    games: dict[str, spb.MyGame] = {}
    for version_id in sorted(own):
        for g in repo.list_games(bot_version_id=version_id, limit=None, include_validation=True):
            seat = next(s.seat for s in g.seats if s.bot_version_id in own)
            games[g.uid] = game_view(g, seat, labels, tournaments, commands)
    return sorted(games.values(), key=lambda g: (g.finished_at, g.game_id))


def _commands(versions: Iterable[BotVersionInfo]) -> set[int]:
    """The ids of the command bots' versions (C++ and JavaScript uploads, ``cmd:`` bots)."""
    return {v.id for v in versions if v.source_kind == SourceKind.COMMAND}


def game_view(
    g: GameSummary,
    seat: int,
    labels: dict[int, str],
    tournaments: dict[int, str],
    commands: Collection[int] = (),
) -> spb.MyGame:
    """One game as a list shows it; ``seat`` is the caller's (their own bot's); ``commands``:
    the versions that are command bots (their packs replay against a command)."""
    mine = next((s.bot_version_id for s in g.seats if s.seat == seat), None)
    return spb.MyGame(
        game_id=g.uid,
        tournament=tournaments.get(g.tournament_id or 0, ""),
        seats=[labels.get(s.bot_version_id, "?") for s in g.seats],
        my_seat=seat,
        result=g.result,
        verdict=g.verdict.value,
        reason=g.reason,
        finished_at=wire_time(g.finished_at),
        game=g.game,
        kind=g.kind.value,
        my_fault=g.offender_seat == seat and g.verdict.is_fault,
        my_command=mine in commands,
    )


def my_game(repo: Repository, caller: Caller, game_id: str) -> spb.MyGameRecord:
    """A game's record: rated games for anyone, a validation game for its uploader and staff."""
    detail = repo.get_game(bounds.reference(game_id, "game_id"))
    summary = detail.summary
    if not may_read_game(repo, caller, summary):
        raise PermissionError(private_game(summary.uid))
    versions = repo.list_bot_versions()
    labels = {v.id: v.label for v in versions}
    tournaments = {t.id: t.name for t in repo.list_tournaments()}
    seat = own_seat(repo, caller.player, summary)
    return spb.MyGameRecord(
        game=game_view(summary, seat or 0, labels, tournaments, _commands(versions)),
        record_text=detail.record_text or "",
        record_json=json.dumps(detail.record_json) if detail.record_json else "",
    )


def my_output(repo: Repository, caller: Caller, game_id: str, seat: int | None) -> spb.MyOutput:
    """A seat's captured output: the caller's own bot's; any seat's for staff."""
    detail = repo.get_game(bounds.reference(game_id, "game_id"))
    summary = detail.summary
    wanted = readable_seat(repo, caller, summary, seat, "output")
    version = repo.get_bot_version(summary.seats[wanted].bot_version_id)
    return spb.MyOutput(
        game_id=summary.uid,
        seat=wanted,
        bot=version.label,
        output=detail.stderr[wanted] or "",
        record=detail.record_text or "",
        remote=version.source_kind is SourceKind.REMOTE,
    )


def readable_seat(
    repo: Repository, caller: Caller, summary: GameSummary, seat: int | None, what: str
) -> int:
    """The seat whose private ``what`` (output, failure pack) the caller asks for: their own
    bot's (the default), any seat for staff; :class:`PermissionError` otherwise."""
    mine = own_seat(repo, caller.player, summary)
    wanted = mine if seat is None else seat
    if wanted is None and caller.sees_all:
        wanted = 0
    if wanted is None:
        raise PermissionError(
            f"none of your bots played game {summary.uid}: you may read only your own bot's {what}"
        )
    if wanted != mine and not caller.sees_all:
        raise PermissionError(
            f"seat {wanted} of game {summary.uid} is another player's bot: you may read only "
            f"your own bot's {what} (seat {mine})"
        )
    if not 0 <= wanted < len(summary.seats):
        raise ValueError(f"game {summary.uid} has no seat {wanted}")
    return wanted


def my_failure_pack(
    repo: Repository, caller: Caller, game_id: str, seat: int | None
) -> spb.MyFailurePack:
    """A seat's failure pack: the caller's own bot's; any seat's for staff."""
    detail = repo.get_game(bounds.reference(game_id, "game_id"))
    summary = detail.summary
    packs = detail.failure_packs
    if seat is None and caller.sees_all and own_seat(repo, caller.player, summary) is None:
        # Staff asking without a seat: the seat that faulted.
        seat = next((i for i, pack in enumerate(packs) if pack), None)
    wanted = readable_seat(repo, caller, summary, seat, "failure pack")
    pack = packs[wanted] if wanted < len(packs) else None
    if not pack:
        raise NotFoundError(f"seat {wanted} of game {summary.uid} did not fault: it has no pack")
    version = repo.get_bot_version(summary.seats[wanted].bot_version_id)
    return spb.MyFailurePack(game_id=summary.uid, seat=wanted, bot=version.label, pack_json=pack)


def _version_view(
    info: SubmissionInfo, playing: bool, where: Callable[[int], Position] | None = None
) -> spb.SubmissionView:
    view = spb.SubmissionView(
        bot=info.bot_name,
        version=info.version,
        digest=info.digest,
        status=info.status.value,
        reason=info.reason,
        uploaded_at=wire_time(info.uploaded_at),
        validated_at=wire_time(info.validated_at),
        archive_bytes=info.archive_bytes,
        unpacked_bytes=info.unpacked_bytes,
        files=info.files,
        playing=playing,
        output=info.output,
        validation_game_id=info.validation_game_uid or "",
    )
    if where is not None and info.status is SubmissionStatus.VALIDATING:
        position = where(info.id)
        view.queue_state = position.state
        view.queue_place = position.place
        if position.estimate_s is not None:
            view.wait_estimate_s = position.estimate_s
    return view
