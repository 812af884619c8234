"""Grades against the reference levels: SPRT per level, a fixed budget, the CSV row, and a
run cut off by a crash resumed without replaying or double-counting a game (the games are
stored by a stand-in player here; tests/term/test_term_e2e.py plays real ones)."""

from __future__ import annotations

import asyncio
import csv
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from termgames import store_game

from referee.analysis.grading import (
    LEVELS,
    GradeSettings,
    PlayGame,
    grade_all,
    grade_uid,
)
from referee.commands.grade import grades_csv
from referee.commands.main import main
from referee.play.bots import register_source
from referee.storage import BotVersionInfo, Repository, SourceKind, TournamentFormat
from referee.storage.tournaments import TournamentSettings


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    return Repository.open(str(tmp_path / "arena.db"))


def _student(repo: Repository, name: str) -> BotVersionInfo:
    return repo.add_bot_version(name, "v1", source_kind=SourceKind.COMMAND, location=f"./{name}")


def _levels(repo: Repository) -> list[BotVersionInfo]:
    return [register_source(repo, spec) for _, spec in LEVELS]


class Umpire:
    """Stores each asked game at once: the student wins against the levels below ``beats``
    and loses against the others; counts every uid it is asked to play."""

    def __init__(self, repo: Repository, beats: dict[str, int], crash_after: int = -1) -> None:
        self.repo, self.beats, self.crash_after = repo, beats, crash_after
        self.asked: Counter[str] = Counter()
        self.levels = {v.id: i for i, v in enumerate(_levels(repo), start=1)}

    async def __call__(
        self, uid: str, seats: Sequence[BotVersionInfo], opening: Sequence[str]
    ) -> None:
        if self.crash_after == 0:
            raise RuntimeError("the grading process died")
        self.crash_after -= 1
        self.asked[uid] += 1
        student_seat = 0 if seats[0].id not in self.levels else 1
        student, level = seats[student_seat], seats[1 - student_seat]
        wins = self.levels[level.id] <= self.beats[student.bot_name]
        winner = student_seat if wins else 1 - student_seat
        store_game(self.repo, seats[0].id, seats[1].id, winner, uid=uid)


def _grade(repo: Repository, play: PlayGame | None, settings: GradeSettings, *names: str):  # type: ignore[no-untyped-def]
    students = [(repo.find_bot_version(n), n) for n in names]
    return asyncio.run(grade_all(repo, students, _levels(repo), settings, play, concurrency=2))


def test_sprt_finds_the_highest_level_beaten_and_skips_the_rest(repo: Repository) -> None:
    """A student beating L1 and L2 but not L3 gets 2 by SPRT; one beating nothing stops at L1."""
    _student(repo, "ann"), _student(repo, "bob")
    umpire = Umpire(repo, {"ann": 2, "bob": 0})
    grades, run = _grade(repo, umpire, GradeSettings(), "ann", "bob")
    ann, bob = grades
    assert (ann.grade, ann.highest) == (2, "reference-L2")
    assert [r.decided_by for r in ann.levels] == ["SPRT H1", "SPRT H1", "SPRT H0"]
    assert all(r.games > 0 and r.games % 2 == 0 for r in ann.levels)
    assert (bob.grade, bob.highest) == (0, "none")
    assert [r.decided_by for r in bob.levels] == ["SPRT H0", "not played", "not played"]
    assert run.played == sum(r.games for g in grades for r in g.levels) and run.reused == 0
    assert max(umpire.asked.values()) == 1


def test_fixed_budget_plays_exactly_its_pairs(repo: Repository) -> None:
    """--pairs 5: ten games per level played, the interval decides; three won pairs of three
    are not yet called a beaten level."""
    _student(repo, "ann"), _student(repo, "bob")
    umpire = Umpire(repo, {"ann": 1, "bob": 3})
    grades, _ = _grade(repo, umpire, GradeSettings(pairs=5), "ann")
    assert [(r.games, r.beaten) for r in grades[0].levels] == [(10, True), (10, False), (0, False)]
    assert grades[0].levels[0].low is not None and grades[0].levels[0].low > 0.5
    short, _ = _grade(repo, umpire, GradeSettings(pairs=3), "bob")
    assert (short[0].levels[0].games, short[0].levels[0].beaten) == (6, False)


def test_crash_then_resume_never_replays_or_double_counts(repo: Repository) -> None:
    """A run that dies after 5 games, then a second run: every game is asked for once, the
    stored ones are reused, and the grade equals an uninterrupted run's."""
    _student(repo, "ann")
    crashing = Umpire(repo, {"ann": 2}, crash_after=5)
    with pytest.raises(ExceptionGroup):
        _grade(repo, crashing, GradeSettings(), "ann")
    resumed = Umpire(repo, {"ann": 2})
    grades, run = _grade(repo, resumed, GradeSettings(), "ann")
    assert run.reused == 5
    assert not set(crashing.asked) & set(resumed.asked)
    total = sum(r.games for r in grades[0].levels)
    assert total == 5 + run.played == len(repo.list_games(limit=None))
    assert grades[0].grade == 2
    again, rerun = _grade(repo, None, GradeSettings(), "ann")
    assert again == grades and rerun.played == 0 and rerun.reused == total


def test_csv_has_one_row_per_student_with_each_level(repo: Repository) -> None:
    """The CSV for the learning-management system: login, version, grade, per-level columns."""
    _student(repo, "ann")
    grades, _ = _grade(repo, Umpire(repo, {"ann": 1}), GradeSettings(pairs=5), "ann")
    lines = grades_csv(grades).splitlines()
    assert lines[0].startswith("login,bot,version,grade,highest_beaten,status,reference-L1_score")
    assert lines[1] == (
        "ann,ann,v1,1,reference-L1,graded,1.000,10,beaten,0.000,10,not beaten,,0,not played"
    )


def test_no_games_and_an_undecided_sprt_are_not_grades(repo: Repository) -> None:
    """A bot with no games is "not graded" (no grade, no "not beaten"); an SPRT stopped after
    1 of 20 pairs is "incomplete" (no grade yet), in the grade and in its CSV row."""
    _student(repo, "ann"), _student(repo, "bob")
    umpire = Umpire(repo, {"bob": 0})
    bob = repo.find_bot_version("bob")
    for leg, seats in enumerate(([bob, _levels(repo)[0]], [_levels(repo)[0], bob])):
        asyncio.run(umpire(grade_uid(bob, "reference-L1", 0, leg), seats, ()))
    grades, _ = _grade(repo, None, GradeSettings(), "ann", "bob")  # read what is stored
    ann, bob_grade = grades
    assert ann.status == "not graded" and ann.levels[0].state == "not played"
    assert bob_grade.status == "incomplete" and bob_grade.levels[0].games == 2
    assert bob_grade.levels[0].state == "incomplete"
    rows = grades_csv(grades).splitlines()[1:]
    assert rows[0].startswith("ann,ann,v1,,none,not graded,,0,not played")
    assert rows[1].startswith("bob,bob,v1,,none,incomplete,0.000,2,incomplete")


@pytest.mark.slow
def test_one_row_per_login(repo: Repository, tmp_path: Path) -> None:
    """A student with two bots in the tournament graded is one row (the newer version, the
    other named on stderr); naming two bots of one student is refused."""
    repo.create_player("alice"), repo.create_player("bob")
    old = repo.add_bot_version(
        "alice-a", "1", source_kind=SourceKind.COMMAND, location="./a", owner="alice"
    )
    new = repo.add_bot_version(
        "alice-b", "1", source_kind=SourceKind.COMMAND, location="./b", owner="alice"
    )
    bob = repo.add_bot_version(
        "bob-a", "1", source_kind=SourceKind.COMMAND, location="./c", owner="bob"
    )
    settings = TournamentSettings(name="final", format=TournamentFormat.ROUND_ROBIN, game="tetress")
    repo.create_tournament(settings, [old.id, new.id, bob.id])
    db = str(tmp_path / "arena.db")
    out = tmp_path / "grades.csv"
    argv = ["grade", "--report-only", "--db", db]
    assert main([*argv, "--tournament", "final", "--csv", str(out)]) == 0
    rows = list(csv.DictReader(out.read_text().splitlines()))
    assert [(r["login"], r["bot"]) for r in rows] == [("alice", "alice-b"), ("bob", "bob-a")]
    assert main([*argv, "alice-a", "alice-b"]) == 2


def test_other_terms_play_afresh(repo: Repository) -> None:
    """Games stored on one set of terms are never reused for another."""
    _student(repo, "ann")
    _grade(repo, Umpire(repo, {"ann": 0}), GradeSettings(pairs=2, terms="aaaa"), "ann")
    again = Umpire(repo, {"ann": 0})
    _, run = _grade(repo, again, GradeSettings(pairs=2, terms="bbbb"), "ann")
    assert run.reused == 0 and run.played == 4
    assert all("-bbbb-" in uid for uid in again.asked)
