"""Kill the referee (SIGKILL) in the middle of a tournament, start it again: it continues, no
finished game is played again or counted twice, cut-off games are replayed from the start."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest
from tournament_helpers import COURSE_RANDOM, GREEDY, PYTHON, RANDOM, ROOT, make_tournament

from referee.storage import PairingStatus, Repository, TournamentFormat, TournamentStatus

# Every test here starts processes (bots, the CLI, fresh interpreters).
pytestmark = pytest.mark.slow


def _run_cli(db: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            PYTHON,
            "-m",
            "referee.commands.main",
            "tournament",
            *args,
            "--db",
            str(db),
            "--no-progress",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_sigkill_mid_tournament_then_resume_finishes_without_double_counting(
    tmp_path: Path,
) -> None:
    """The resumed run plays exactly the missing games; the games stored before the kill are
    kept untouched and every (pairing, game) slot holds exactly one counted game."""
    db = tmp_path / "arena.db"
    repo = Repository.open(str(db))
    bots = [RANDOM, GREEDY, COURSE_RANDOM, f"{RANDOM}:RandomBot"]
    t = make_tournament(
        repo, "resume", TournamentFormat.ROUND_ROBIN, bots, turn_limit=40, concurrency=2
    )
    planned = 12
    first = _run_cli(db, "run", "resume")
    children: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 60
        while repo.count_games(tournament_id=t.id) < 3:
            assert first.poll() is None, first.communicate()[0]
            assert time.monotonic() < deadline, "no games recorded"
            time.sleep(0.05)
        parent = psutil.Process(first.pid)
        children = parent.children(recursive=True)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(10)
    finally:
        # Launched bots run in their own process groups: a SIGKILLed referee cannot stop them.
        for child in children:
            with contextlib.suppress(psutil.Error):
                child.kill()
    before = {g.uid: g for g in repo.list_games(tournament_id=t.id, limit=None)}
    assert 3 <= len(before) < planned
    assert repo.get_tournament(t.id).status is TournamentStatus.RUNNING
    cut_off = [p.id for p in repo.pairings(t.id, status=PairingStatus.RUNNING)]
    assert cut_off, "the kill should leave at least one pairing mid-play"

    second = _run_cli(db, "resume", "resume")
    out, _ = second.communicate(timeout=120)
    assert second.returncode == 0, out
    assert "interrupted pairing" in out

    after = repo.list_games(tournament_id=t.id, limit=None)
    slots = Counter((g.pairing_id, g.game_index) for g in after if g.counted)
    assert len(slots) == planned and set(slots.values()) == {1}
    for uid, game in before.items():
        kept = repo.get_game(uid).summary
        assert (kept.pairing_id, kept.game_index, kept.result) == (
            game.pairing_id,
            game.game_index,
            game.result,
        )
    assert repo.count_games(tournament_id=t.id) == planned
    assert repo.get_tournament(t.id).status is TournamentStatus.FINISHED
    assert all(p.status is PairingStatus.FINISHED for p in repo.pairings(t.id))
    # Only the missing games were played by the second run.
    new = [g for g in after if g.uid not in before]
    assert len([g for g in new if g.counted]) == planned - len(
        [g for g in before.values() if g.counted]
    )
