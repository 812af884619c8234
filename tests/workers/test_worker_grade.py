"""`referee grade` on PostgreSQL: the games go to `referee worker` processes as jobs keyed by
their uids; a grading run killed mid-way and started again neither replays nor double-counts
a game."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from workers_helpers import RANDOM, ROOT, start_worker, stop_workers

from referee.play.bots import register_source
from referee.storage import Repository

pytestmark = pytest.mark.slow

GRADE = ["grade", "stu", "--pairs", "2", "--openings", "none", "--param", "turn_limit=8"]


def _grade(url: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "referee.commands.main", *GRADE, "--db", url, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _grade_games(repo: Repository) -> list[str]:
    return [g.uid for g in repo.list_games(limit=None) if g.uid.startswith("grade-")]


def test_grading_on_workers_resumes_without_double_counting(pg_url: str, tmp_path: Path) -> None:
    """The first run is killed once a worker has stored a game; the second run reuses what is
    stored, the worker plays the rest, and every grading game exists once (4: two pairs
    against Level1, which the random example does not beat)."""
    repo = Repository.open(pg_url)
    register_source(repo, RANDOM, name="stu")
    worker = start_worker(pg_url, tmp_path / "w1.log", concurrency=2)
    try:
        first = _grade(pg_url)
        deadline = time.monotonic() + 240
        while not _grade_games(repo):
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "no grading game was stored"
            time.sleep(0.3)
        first.send_signal(signal.SIGKILL)
        first.wait(30)
        second = _grade(pg_url)
        out, err = second.communicate(timeout=300)
        assert second.returncode == 0, err
    finally:
        stop_workers([worker])
    import json

    report = json.loads(out.strip().splitlines()[-1])
    uids = _grade_games(repo)
    assert len(uids) == len(set(uids)) == 4
    assert Counter(u.rsplit("-p", 1)[0] for u in uids) == Counter({uids[0].rsplit("-p", 1)[0]: 4})
    assert report["reused"] >= 1 and report["reused"] + report["played"] == 4
    level1 = report["students"][0]["levels"][0]
    assert level1["games"] == 4 and report["students"][0]["grade"] == 0
    assert "games go to the job queue" in err
    records = [repo.get_game(u).record_text or "" for u in uids]
    assert all('[Event "grade"]' in r for r in records)
    repo.close()
