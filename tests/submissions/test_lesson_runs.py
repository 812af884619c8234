"""The server's lesson runs: an accepted upload is put, in the sandbox, to the positions its
bot's earlier version lost, each outcome stored; the job is cancelled cleanly on shutdown."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import psutil
import pytest
from hostile import GOOD_SDK_BOT
from lessondata import store_game
from upload_harness import submit_cli, upload_server, write_tree

from engine.records.lessons import Limits
from referee.analysis.lessonbook import LessonBook
from referee.hosting.lessonjob import LessonRuns
from referee.storage import Repository, SourceKind
from referee.storage import submissions as rows
from referee.storage.lessonruns import runs_of

#: Results a position's try may have (client_sdk.testing.Tried).
RESULTS = {"solved", "missed", "repeated", "illegal", "time", "memory", "crash", "no_start"}

HANGING_BOT = """
import time

from client_sdk import Agent


class Bot(Agent):
    def choose_move(self, state, clocks):
        while True:
            time.sleep(1)
"""


@pytest.mark.slow
def test_an_accepted_upload_is_run_on_the_earlier_versions_lessons(tmp_path: Path) -> None:
    """v2, uploaded after v1 lost two analysed games, is tried in the sandbox on every one of
    v1's lessons and each position's outcome is stored for v2 (none for v1, the first)."""
    write_tree(tmp_path / "v1", {"ant.py": GOOD_SDK_BOT})
    write_tree(tmp_path / "v2", {"ant.py": GOOD_SDK_BOT + "\n# v2\n"})

    async def main() -> None:
        async with upload_server(tmp_path, players=("alice", "bob")) as up:
            first = await submit_cli(up, "alice", str(tmp_path / "v1" / "ant.py"))
            assert first["status"] == "accepted", first
            v1 = rows.get_submission(up.repo.db, "alice-ant").bot_version_id
            bee = up.repo.add_bot_version(
                "bee", "v1", source_kind=SourceKind.REMOTE, location="", owner="bob"
            )
            for seed in (1, 2):
                store_game(up.repo, (v1, bee.id), seed, analysed=True)
            await up.service.lesson_runs.stored(v1)
            assert runs_of(up.repo.db, [v1]) == []
            lessons = LessonBook(up.repo).of_versions([up.repo.get_bot_version(v1)]).lessons
            assert lessons
            second = await submit_cli(up, "alice", str(tmp_path / "v2" / "ant.py"))
            assert second["status"] == "accepted", second
            v2 = next(v.id for v in up.repo.list_bot_versions("alice-ant") if v.id != v1)
            await up.service.lesson_runs.stored(v2)
            runs = runs_of(up.repo.db, [v2])
            keys = {(x.game_id, x.ply, x.seat) for x in lessons}
            assert {r.key for r in runs} == keys and len(runs) == len(lessons)
            assert all(r.lessons_of_id == v1 and r.result in RESULTS for r in runs)
            # The random bot answers legally in time: a judged move on each position.
            assert all(r.result in ("solved", "missed", "repeated") and r.move for r in runs)

    asyncio.run(main())


@pytest.mark.slow
def test_the_job_is_cancelled_cleanly_on_shutdown(tmp_path: Path) -> None:
    """close() while a hanging bot thinks on a position (with a minute on its clock): the
    bot's process is gone, the runner thread ended, and nothing is stored."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    repo.create_player("alice")
    bee = repo.add_bot_version("bee", "v1", source_kind=SourceKind.REMOTE, location="")
    first = repo.add_bot_version(
        "alice-ant", "v1", source_kind=SourceKind.REMOTE, location="", owner="alice"
    )
    store_game(repo, (first.id, bee.id), 1, analysed=True)
    bot = write_tree(tmp_path / "hang", {"ant.py": HANGING_BOT}) / "ant.py"
    new = rows.NewVersion(
        "alice", "alice-ant", "v2", "d" * 64, SourceKind.SDK_MODULE, str(bot), 1, 1, 1
    )
    upload, _ = rows.record_submission(repo.db, new)

    async def main() -> None:
        runs = LessonRuns(repo, LessonBook(repo), Limits(60.0, 0.0, 250.0))
        before = {t.ident for t in threading.enumerate()}
        # Processes an earlier test in this worker left running (e.g. the daemon analysis
        # thread's evaluator) are not this run's to end.
        others = {p.pid for p in psutil.Process().children(recursive=True)}
        runs.submit(upload.bot_version_id)
        await asyncio.to_thread(runs.started.wait)
        children = [p for p in psutil.Process().children(recursive=True) if p.pid not in others]
        assert children
        await runs.close()
        _, alive = psutil.wait_procs(children, timeout=10)
        assert alive == []
        assert not [
            t
            for t in threading.enumerate()
            if t.ident not in before and t.name.startswith("lesson-run")
        ]
        assert runs.done == []

    try:
        asyncio.run(main())
        assert runs_of(repo.db, [upload.bot_version_id]) == []
    finally:
        repo.close()
