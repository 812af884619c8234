"""The lessons of stored games: computed from each game's stored reference evaluation (the one
the game pages show, :mod:`referee.analysis.gameeval`) by the SDK's own lesson maker
(:mod:`client_sdk.reference.lessons`), so a student's local lessons and the server's say the
same of the same game.

Lessons are not a table: they are a pure function of a stored record and its stored analysis,
both kept with the game, so a table would only repeat them (and go stale if the thresholds
change). What costs is the analysis, and it is computed once per game and stored; the lessons
of a game seat are then kept in memory (:class:`LessonBook`), so listing a bot's lessons reads
each game once per process. A game not yet analysed is queued and counted as pending.

A lesson holds the bot's own position (the board, which both players see), the moves of the
game to it (public in the record), the bot's move, and the reference search's moves and
scores: nothing of either bot's thinking (think records, output) is copied into it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from client_sdk.reference.lessons import lessons_from_judgements
from engine.errors import EngineError
from engine.records import read_record
from engine.records.lessons import Lesson
from referee.analysis.gameeval import RECORD_KEY, Analysis, Analyst, analysis_of
from referee.storage import Repository
from referee.storage.bots import BotVersionInfo
from referee.storage.gametypes import GameSummary

#: Game seats whose lessons are kept in memory (each a few lessons).
CACHE_SEATS = 20_000


@dataclass(frozen=True, slots=True)
class BotLessons:
    """Lessons of some bot versions, and how many of their games are read or still pending."""

    lessons: tuple[Lesson, ...]
    games: int
    pending: int


def game_lessons(
    record_text: str,
    analysis: Analysis | None,
    seat: int,
    *,
    bot: str,
    version: str,
    game_id: str,
) -> list[Lesson] | None:
    """``seat``'s lessons in one stored game (``None``: the game is not analysed yet)."""
    if analysis is None:
        return None
    try:
        record = read_record(record_text)
    except (EngineError, ValueError):
        return []
    return lessons_from_judgements(
        record,
        list(analysis.evals.values()),
        seat,
        nodes=analysis.nodes,
        bot=bot,
        version=version,
        game_id=game_id,
    )


class LessonBook:
    """Lessons of stored games for the read services and pages; analyses missing games with
    ``analyst`` (one game at a time, off the caller's thread)."""

    def __init__(self, repo: Repository, analyst: Analyst | None = None) -> None:
        self.repo = repo
        self.analyst = analyst
        self._kept: dict[tuple[int, int], tuple[Lesson, ...]] = {}
        self._lock = threading.Lock()

    def of_versions(self, versions: Iterable[BotVersionInfo]) -> BotLessons:
        """Every lesson of ``versions``' games, by version then game, and the counts."""
        found: list[Lesson] = []
        games = pending = 0
        for version in versions:
            listed = self.repo.list_games(
                bot_version_id=version.id, limit=None, include_validation=True
            )
            for summary in listed:
                games += 1
                seats = [s.seat for s in summary.seats if s.bot_version_id == version.id]
                lessons = self._game(summary, seats, version)
                if lessons is None:
                    pending += 1
                else:
                    found.extend(lessons)
        return BotLessons(tuple(found), games, pending)

    def _game(
        self, summary: GameSummary, seats: Sequence[int], version: BotVersionInfo
    ) -> list[Lesson] | None:
        with self._lock:
            kept = [self._kept.get((summary.id, seat)) for seat in seats]
        if all(k is not None for k in kept):
            return [lesson for k in kept if k is not None for lesson in k]
        detail = self.repo.get_game(summary.id)
        stored = (detail.record_json or {}).get(RECORD_KEY)
        analysis = analysis_of(stored)
        if analysis is None and self.analyst is not None:
            analysis = self.analyst.get(summary.id, detail.record_text, stored)
        out: list[Lesson] = []
        for seat in seats:
            lessons = game_lessons(
                detail.record_text or "",
                analysis,
                seat,
                bot=version.bot_name,
                version=version.version,
                game_id=summary.uid,
            )
            if lessons is None:
                return None
            with self._lock:
                if len(self._kept) >= CACHE_SEATS:
                    self._kept.clear()
                self._kept[(summary.id, seat)] = tuple(lessons)
            out.extend(lessons)
        return out
