"""The adaptive format end to end: real SQLite files, real launched bots, the CLI; a SIGKILL
mid-tournament and a resume that plays no game twice."""

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

BOTS = [RANDOM, GREEDY, COURSE_RANDOM, f"{RANDOM}:RandomBot"]
#: Never reached, so the budget decides when these tournaments end.
NEVER = {"confidence": 2.0}


def _cli(db: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [PYTHON, "-m", "referee.commands.main", *args, "--db", str(db)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ, COLUMNS="160"),
    )


def _rounds_are_whole(repo: Repository, tournament_id: int, bots: int) -> None:
    """Every bot plays once in every stored round, and a round starts after the last one."""
    pairings = repo.pairings(tournament_id)
    for number in {p.round for p in pairings}:
        seen = [b for p in pairings if p.round == number for b in (p.bot_a_id, p.bot_b_id)]
        assert sorted(seen) == sorted(set(seen)) and len(seen) == bots
    for number in sorted({p.round for p in pairings})[1:]:
        done = max(
            g.finished_at
            for p in pairings
            if p.round == number - 1
            for g in repo.list_games(pairing_id=p.id)
        )
        start = min(
            g.started_at
            for p in pairings
            if p.round == number
            for g in repo.list_games(pairing_id=p.id)
        )
        assert start >= done


def test_adaptive_runs_round_by_round_to_its_budget_and_shows_its_order(tmp_path: Path) -> None:
    """`tournament run` plays whole rounds (every bot in each) up to the game budget, stores
    the tables, and `leaderboard` and `tournament show` print how sure each neighbours'
    order is."""
    db = tmp_path / "arena.db"
    repo = Repository.open(str(db))
    t = make_tournament(
        repo, "adapt", TournamentFormat.ADAPTIVE, BOTS, options={**NEVER, "budget": 16}
    )
    run = _cli(db, "tournament", "run", "adapt", "--no-progress")
    out, _ = run.communicate(timeout=300)
    assert run.returncode == 0, out
    assert repo.get_tournament(t.id).status is TournamentStatus.FINISHED
    assert repo.count_games(tournament_id=t.id) == 16
    # Four bots: two pairings of two games a round.
    assert sorted({p.round for p in repo.pairings(t.id)}) == [1, 2, 3, 4]
    _rounds_are_whole(repo, t.id, 4)
    assert repo.latest_ratings("ml_elo", tournament_id=t.id) is not None
    board = _cli(db, "leaderboard", "adapt")
    text, _ = board.communicate(timeout=120)
    assert board.returncode == 0, text
    assert "Order of neighbours" in text and "P(upper stronger)" in text
    assert text.count("%") >= 3  # three neighbour pairs, each with its likelihood
    show = _cli(db, "tournament", "show", "adapt")
    text, _ = show.communicate(timeout=120)
    assert show.returncode == 0, text
    assert "adaptive: stops when every two neighbours' order is 200% sure" in text
    assert "Order of neighbours" in text


def test_adaptive_stops_early_once_every_neighbours_order_is_settled(tmp_path: Path) -> None:
    """With a low confidence (51%) a clear order is settled after the first round or two,
    long before the budget of 80 games."""
    db = tmp_path / "arena.db"
    repo = Repository.open(str(db))
    bots = [RANDOM, GREEDY]
    t = make_tournament(
        repo, "early", TournamentFormat.ADAPTIVE, bots, options={"confidence": 0.51, "budget": 80}
    )
    run = _cli(db, "tournament", "run", "early", "--no-progress")
    out, _ = run.communicate(timeout=300)
    assert run.returncode == 0, out
    played = repo.count_games(tournament_id=t.id)
    assert 2 <= played < 80 and played % 2 == 0
    assert repo.get_tournament(t.id).status is TournamentStatus.FINISHED


def test_sigkill_mid_adaptive_then_resume_plays_no_game_twice(tmp_path: Path) -> None:
    """A killed adaptive tournament resumes where it stopped: the stored rounds are kept
    (never paired again), every (pairing, game) slot holds one counted game, and it ends at
    its budget."""
    db = tmp_path / "arena.db"
    repo = Repository.open(str(db))
    t = make_tournament(
        repo,
        "adresume",
        TournamentFormat.ADAPTIVE,
        BOTS,
        turn_limit=40,
        concurrency=2,
        options={**NEVER, "budget": 24},
    )
    first = _cli(db, "tournament", "run", "adresume", "--no-progress")
    children: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 120
        while repo.count_games(tournament_id=t.id) < 3:
            assert first.poll() is None, first.communicate()[0]
            assert time.monotonic() < deadline, "no games recorded"
            time.sleep(0.05)
        children = psutil.Process(first.pid).children(recursive=True)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(10)
    finally:
        for child in children:
            with contextlib.suppress(psutil.Error):
                child.kill()
    before = {g.uid: g for g in repo.list_games(tournament_id=t.id, limit=None)}
    rounds_before = {(p.round, p.board, p.bot_a_id, p.bot_b_id) for p in repo.pairings(t.id)}
    assert 3 <= len(before) < 24

    second = _cli(db, "tournament", "resume", "adresume", "--no-progress")
    out, _ = second.communicate(timeout=300)
    assert second.returncode == 0, out

    after = repo.list_games(tournament_id=t.id, limit=None)
    slots = Counter((g.pairing_id, g.game_index) for g in after if g.counted)
    assert len(slots) == 24 and set(slots.values()) == {1}
    assert rounds_before <= {
        (p.round, p.board, p.bot_a_id, p.bot_b_id) for p in repo.pairings(t.id)
    }
    for uid, game in before.items():
        kept = repo.get_game(uid).summary
        assert (kept.pairing_id, kept.game_index, kept.result) == (
            game.pairing_id,
            game.game_index,
            game.result,
        )
    assert repo.get_tournament(t.id).status is TournamentStatus.FINISHED
    assert all(p.status is PairingStatus.FINISHED for p in repo.pairings(t.id))
    assert sorted({p.round for p in repo.pairings(t.id)}) == [1, 2, 3, 4, 5, 6]
    _rounds_are_whole(repo, t.id, 4)
