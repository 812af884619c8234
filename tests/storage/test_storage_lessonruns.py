"""Lesson runs round-trip through both backends: stored per version, replaced on a rerun."""

from __future__ import annotations

from referee.storage import Repository, SourceKind
from referee.storage.lessonruns import PositionRun, runs_of, save_runs


def _versions(repo: Repository) -> tuple[int, int]:
    v1 = repo.add_bot_version("b", "v1", source_kind=SourceKind.PACKAGE, location="/x/1")
    v2 = repo.add_bot_version("b", "v2", source_kind=SourceKind.PACKAGE, location="/x/2")
    return v1.id, v2.id


def test_runs_round_trip_per_version_and_a_rerun_replaces_them(repo: Repository) -> None:
    """Each position's outcome comes back as saved, only for the versions asked for, and
    saving a version's runs again replaces the earlier ones."""
    v1, v2 = _versions(repo)
    runs = [
        PositionRun(v2, v1, "g-1", 7, 0, "solved", "T-a1b2c3d4", 0.412),
        PositionRun(v2, v1, "g-2", 12, 1, "missed", "I-a1a2a3a4", 0.25),
        PositionRun(v2, v1, "g-2", 14, 1, "time", None, 1.5),
    ]
    assert save_runs(repo.db, v2, runs) == 3
    back = runs_of(repo.db, [v2])
    assert back == runs
    assert [r.solved for r in back] == [True, False, False]
    assert runs_of(repo.db, [v1]) == []
    assert runs_of(repo.db, []) == []
    save_runs(repo.db, v2, runs[:1])
    assert runs_of(repo.db, [v1, v2]) == runs[:1]
