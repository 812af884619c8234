"""Grades against the reference levels: the highest level each student's bot beats, with 95%
confidence, and the games behind it.

Each student's graded version meets the reference levels in order (``Level1``, ``Level2``,
``Level3``: the anchors, launched from the shipped code). Against one level it plays pairs of
games from the openings book, the same opening twice with the colours swapped, and the
pentanomial SPRT (:mod:`referee.analysis.sprt`) decides: ``elo <= elo0`` against
``elo >= elo1`` at 5% error each way; H1 means the level is beaten. With a fixed budget
(``pairs``) every level gets that many pairs and is beaten when the 95% interval of the pair
scores lies above one half (with one virtual won and one virtual lost pair, so that a short
lucky run is not called certain). An SPRT still undecided at ``max_pairs`` is judged the same
way.
A student who does not beat a level does not play the higher ones.

Every game has a deterministic uid (:func:`grade_uid`: the student's version, the level, the
pair and the leg), and the games table holds each uid once. Grading again (after a crash, or
to read a finished grade) reuses every stored game and plays only the missing ones, so no game
is replayed or counted twice. How a game is played is the caller's :data:`PlayGame`: launched
here (:func:`referee.hosting.grade_play.local_player`) or by the workers on PostgreSQL
(:func:`referee.hosting.grade_play.queue_player`).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.records.openings import Book
from referee.analysis.sprt import OUTCOMES, Z95, Decision, Sprt
from referee.storage import BotVersionInfo, GameSummary, NotFoundError, Repository

#: The levels in order, by anchor name, with the bot spec that launches each.
LEVELS: tuple[tuple[str, str], ...] = (
    ("reference-L1", "client_sdk.examples.reference_bot:Level1"),
    ("reference-L2", "client_sdk.examples.reference_bot:Level2"),
    ("reference-L3", "client_sdk.examples.reference_bot:Level3"),
)

#: Plays and stores one game under ``uid`` (seats in order, the opening's moves); stores
#: nothing when the game aborted every attempt: the grade then counts only stored games.
PlayGame = Callable[[str, Sequence[BotVersionInfo], Sequence[str]], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class GradeSettings:
    """How levels are decided: SPRT bounds, or a fixed budget of ``pairs`` per level."""

    elo0: float = 0.0
    elo1: float = 100.0
    alpha: float = 0.05
    beta: float = 0.05
    max_pairs: int = 20
    #: A fixed budget: exactly this many pairs per level, no SPRT.
    pairs: int | None = None
    book: Book | None = None
    #: A short tag of the terms the games are played on (game, parameters, clocks, memory,
    #: book): part of every game's uid, so only games played on the same terms are reused.
    terms: str = ""

    @property
    def method(self) -> str:
        if self.pairs is not None:
            return f"fixed budget of {self.pairs} pairs, 95% interval above 50%"
        return (
            f"pentanomial SPRT elo0={self.elo0:g} elo1={self.elo1:g} "
            f"alpha={self.alpha:g} beta={self.beta:g}, at most {self.max_pairs} pairs"
        )


#: How a level's ``decided_by`` ends when its pairs stopped short of the budget.
_UNFINISHED = "(unfinished)"


def level_state(games: int, beaten: bool, decided_by: str) -> str:
    """A level's state (see ``LevelResult.state``)."""
    if not games:
        return "not played"
    if beaten:
        return "beaten"
    return "incomplete" if decided_by.endswith(_UNFINISHED) else "not beaten"


def grade_status(states: Sequence[str]) -> str:
    """A student's status from the states of the levels in order (``StudentGrade.status``)."""
    if not states or states[0] == "not played":
        return "not graded"
    return "incomplete" if "incomplete" in states else "graded"


@dataclass(frozen=True, slots=True)
class LevelResult:
    """One student's games against one level."""

    level: str
    games: int
    #: The student's points in those games.
    points: float
    beaten: bool
    #: How it was decided: ``SPRT H1``, ``SPRT H0``, ``95% interval`` or ``not played``.
    decided_by: str
    #: The 95% interval of the student's score (pair scores), ``None`` without games.
    low: float | None = None
    high: float | None = None

    @property
    def score(self) -> float | None:
        return self.points / self.games if self.games else None

    @property
    def state(self) -> str:
        """``beaten``, ``not beaten``, ``incomplete`` (not beaten yet, but short of the pairs
        that would decide it: the games stopped, or some could not be played) or ``not
        played``."""
        return level_state(self.games, self.beaten, self.decided_by)

    def as_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "games": self.games,
            "points": self.points,
            "score": self.score,
            "beaten": self.beaten,
            "state": self.state,
            "decided_by": self.decided_by,
            "low": self.low,
            "high": self.high,
        }


@dataclass(frozen=True, slots=True)
class StudentGrade:
    """A student's grade: the version graded and the result against each level."""

    owner: str
    bot: str
    version: str
    levels: tuple[LevelResult, ...]

    @property
    def grade(self) -> int:
        """The number of the highest level beaten (0: none)."""
        beaten = [i for i, r in enumerate(self.levels, start=1) if r.beaten]
        return max(beaten, default=0)

    @property
    def highest(self) -> str:
        return self.levels[self.grade - 1].level if self.grade else "none"

    @property
    def status(self) -> str:
        """``graded``; ``incomplete`` (a level is still undecided: the grade so far is only a
        floor); ``not graded`` (no game against the first level)."""
        return grade_status([r.state for r in self.levels])

    def as_dict(self) -> dict[str, Any]:
        return {
            "owner": self.owner,
            "bot": self.bot,
            "version": self.version,
            "grade": self.grade,
            "highest_beaten": self.highest,
            "status": self.status,
            "levels": [r.as_dict() for r in self.levels],
        }


@dataclass
class GradeRun:
    """What a grading run did (games played now vs reused), for the report's last line."""

    played: int = 0
    reused: int = 0
    failed: list[str] = field(default_factory=list)


def grade_uid(student: BotVersionInfo, level: str, pair: int, leg: int, terms: str = "") -> str:
    """The game id of leg ``leg`` (0: the student moves first) of pair ``pair``."""
    tag = f"{terms}-" if terms else ""
    return f"grade-v{student.id}-{tag}{level}-p{pair}-{leg}"


def terms_tag(*parts: object) -> str:
    """Eight hex digits naming the terms games are played on (see ``GradeSettings.terms``)."""
    import hashlib

    return hashlib.sha256(repr(parts).encode()).hexdigest()[:8]


def _stored_grading(repo: Repository, student: BotVersionInfo) -> dict[str, GameSummary]:
    """The student's stored grading games by uid, in one query (no records)."""
    games = repo.list_games(bot_version_id=student.id, limit=None)
    return {g.uid: g for g in games if g.uid.startswith("grade-")}


def _stored_points(repo: Repository, uid: str, student_seat: int) -> float | None:
    """The student's points in the stored game ``uid`` (``None``: not stored, or aborted)."""
    try:
        detail = repo.get_game(uid)
    except NotFoundError:
        return None
    return _points(detail.summary, student_seat)


def _points(game: GameSummary, student_seat: int) -> float | None:
    if not game.counted:
        return None
    if game.voided and game.winner_seat is None:
        return None
    if game.winner_seat is None:
        return 0.5
    return 1.0 if game.winner_seat == student_seat else 0.0


async def grade_level(
    repo: Repository,
    student: BotVersionInfo,
    level: str,
    reference: BotVersionInfo,
    settings: GradeSettings,
    play: PlayGame | None,
    run: GradeRun,
) -> LevelResult:
    """The student against one level: stored games reused, missing ones played (``play``
    ``None``: nothing is played, the result is what is stored)."""
    test = Sprt(settings.elo0, settings.elo1, settings.alpha, settings.beta)
    budget = settings.pairs if settings.pairs is not None else settings.max_pairs
    games, points = 0, 0.0
    stored = await asyncio.to_thread(_stored_grading, repo, student)
    for pair in range(budget):
        opening = settings.book.pick(pair).moves if settings.book is not None else ()
        pair_points: list[float] = []
        for leg in (0, 1):
            uid = grade_uid(student, level, pair, leg, settings.terms)
            got = _points(stored[uid], leg) if uid in stored else None
            if got is None and play is not None:
                seats = [student, reference] if leg == 0 else [reference, student]
                await play(uid, seats, opening)
                got = await asyncio.to_thread(_stored_points, repo, uid, leg)
                if got is not None:
                    run.played += 1
                else:
                    run.failed.append(uid)
            elif got is not None:
                run.reused += 1
            if got is not None:
                pair_points.append(got)
        if len(pair_points) < 2:
            if play is None:
                break  # a read-only report stops at the first pair not yet played
            continue  # a pair that could not be completed is left out, not half-counted
        games += 2
        points += sum(pair_points)
        test.add_pair(sum(pair_points))
        if settings.pairs is None and test.decision is not Decision.CONTINUE:
            break
    return _judge(level, test, games, points, settings, budget)


def _judge(
    level: str, test: Sprt, games: int, points: float, settings: GradeSettings, budget: int
) -> LevelResult:
    if games == 0:
        return LevelResult(level, 0, 0.0, False, "not played")
    low, high = _interval(test.counts)
    if settings.pairs is None and test.decision is Decision.H1:
        return LevelResult(level, games, points, True, "SPRT H1", low, high)
    if settings.pairs is None and test.decision is Decision.H0:
        return LevelResult(level, games, points, False, "SPRT H0", low, high)
    finished = test.pairs >= budget
    decided = "95% interval" if finished else f"95% interval {_UNFINISHED}"
    return LevelResult(level, games, points, low > 0.5, decided, low, high)


def _interval(counts: Sequence[int]) -> tuple[float, float]:
    """The 95% interval of the mean pair score, from the pentanomial variance with one
    virtual lost pair and one virtual won pair added (mean one half, the widest variance), so
    a short run of wins is not mistaken for certainty: three won pairs of three are not yet
    enough to call a level beaten, four are."""
    values = [0.0, 1.0]
    for count, outcome in zip(counts, OUTCOMES, strict=True):
        values += [outcome] * count
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / n
    half = Z95 * math.sqrt(var / n)
    return max(0.0, mean - half), min(1.0, mean + half)


async def grade_student(
    repo: Repository,
    student: BotVersionInfo,
    owner: str,
    references: Sequence[BotVersionInfo],
    settings: GradeSettings,
    play: PlayGame | None,
    run: GradeRun,
) -> StudentGrade:
    """The levels in order until one is not beaten (the rest: not played)."""
    results: list[LevelResult] = []
    for (level, _), reference in zip(LEVELS, references, strict=True):
        if results and not results[-1].beaten:
            results.append(LevelResult(level, 0, 0.0, False, "not played"))
            continue
        results.append(await grade_level(repo, student, level, reference, settings, play, run))
    return StudentGrade(owner, student.bot_name, student.version, tuple(results))


async def grade_all(
    repo: Repository,
    students: Sequence[tuple[BotVersionInfo, str]],
    references: Sequence[BotVersionInfo],
    settings: GradeSettings,
    play: PlayGame | None,
    *,
    concurrency: int = 1,
    on_grade: Callable[[StudentGrade], None] | None = None,
) -> tuple[list[StudentGrade], GradeRun]:
    """Every student graded, ``concurrency`` students at a time; grades in the given order."""
    run = GradeRun()
    slots = asyncio.Semaphore(max(1, concurrency))
    grades: list[StudentGrade | None] = [None] * len(students)

    async def one(index: int, student: BotVersionInfo, owner: str) -> None:
        async with slots:
            grade = await grade_student(repo, student, owner, references, settings, play, run)
        grades[index] = grade
        if on_grade is not None:
            on_grade(grade)

    async with asyncio.TaskGroup() as tg:
        for index, (student, owner) in enumerate(students):
            tg.create_task(one(index, student, owner))
    return [g for g in grades if g is not None], run


def grades_csv(students: Sequence[dict[str, Any]], levels: Sequence[str]) -> str:
    """One row per student (``StudentGrade.as_dict()`` each) for the learning-management
    system: login, bot, version, grade (empty unless ``status`` is ``graded``), highest level
    beaten, status, and per level score, games and state."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    head = ["login", "bot", "version", "grade", "highest_beaten", "status"]
    writer.writerow(head + [f"{lv}_{c}" for lv in levels for c in ("score", "games", "result")])
    for s in students:
        # Derived here, not read: a report stored before states were written has none.
        states = [level_state(r["games"], r["beaten"], r["decided_by"]) for r in s["levels"]]
        status = grade_status(states)
        row: list[Any] = [s["owner"], s["bot"], s["version"]]
        row += [s["grade"] if status == "graded" else "", s["highest_beaten"], status]
        for r, state in zip(s["levels"], states, strict=True):
            score = "" if r["score"] is None else f"{r['score']:.3f}"
            row += [score, r["games"], state]
        writer.writerow(row)
    return out.getvalue()
