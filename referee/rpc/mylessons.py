"""What ``GetMyLessons`` shows a caller: the lessons of their own bots' stored games (a
student), of any bot (the staff), as a lessons file (docs/records.md). Synchronous, like
:mod:`referee.rpc.myviews`; raises :class:`PermissionError` with the caller's sentence."""

from __future__ import annotations

from client_sdk.proto import submissions_pb2 as spb
from engine.records.lessons import LessonsFile, Limits, write_lessons
from referee.analysis.lessonbook import LessonBook
from referee.rpc.callers import Caller
from referee.server import bounds
from referee.storage import Repository
from referee.storage.bots import BotVersionInfo


def my_lessons(
    repo: Repository,
    caller: Caller,
    book: LessonBook,
    request: spb.GetMyLessonsRequest,
    limits: Limits | None = None,
) -> spb.MyLessons:
    """The lessons of the versions the request names, among those the caller may read, under
    ``limits`` (the server's game limits, which its own lesson runs use)."""
    bot = bounds.bounded(request.bot, "bot", bounds.MAX_REF_CHARS)
    version = bounds.bounded(request.version, "version", bounds.MAX_REF_CHARS)
    player = bounds.bounded(request.player, "player", bounds.MAX_REF_CHARS)
    versions = readable_versions(repo, caller, player)
    chosen = [
        v
        for v in versions
        if (not bot or v.bot_name == bot) and (not version or version in (v.version, v.label))
    ]
    found = book.of_versions(chosen)
    who = bot or player or caller.player.name
    text = write_lessons(LessonsFile(found.lessons, bot=who, limits=limits or Limits()))
    return spb.MyLessons(lessons=text, games=found.games, pending=found.pending)


def readable_versions(repo: Repository, caller: Caller, player: str) -> list[BotVersionInfo]:
    """The bot versions whose lessons ``caller`` may read: their own; any (or ``player``'s)
    for the staff. A student naming another player is refused."""
    if player and player != caller.player.name and not caller.sees_all:
        raise PermissionError(
            "you may read only your own bots' lessons (the instructor sees everyone's)"
        )
    versions = repo.list_bot_versions()
    if player:
        owner = repo.get_player(player).id
        return [v for v in versions if v.owner_id == owner]
    if caller.sees_all:
        return versions
    return [v for v in versions if v.owner_id == caller.player.id]
