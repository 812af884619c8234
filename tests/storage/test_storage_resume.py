"""Resume after a crash: a real process is killed mid-write, and the tournament continues with
no finished game played again or counted twice."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.storage import (
    ConflictError,
    FinishedGame,
    PairingStatus,
    Repository,
    TournamentFormat,
    TournamentSettings,
    TournamentStatus,
    open_database,
)

MakeGame = Callable[..., FinishedGame]
ROOT = Path(__file__).resolve().parents[2]

# Run in a separate process: plays pairing 1 fully and game 0 of pairing 2, claims pairing 3,
# then dies (os._exit, no clean-up) in the middle of writing game 1 of pairing 2: its game and
# seat rows are already sent to the database, its transaction not committed.
CRASHING_RUNNER = textwrap.dedent(
    """
    import os, sys
    from datetime import UTC, datetime
    from sqlalchemy import event
    from sqlalchemy.orm import Session
    from engine.adjudication.verdicts import Verdict
    from referee.storage import FinishedGame, Repository, SeatResult, open_database
    from referee.storage.models import Pairing

    url, t_id = sys.argv[1], int(sys.argv[2])
    repo = Repository(open_database(url))
    p1, p2, p3, _ = repo.pairings(t_id)
    now = datetime.now(UTC)

    def game(p, index):
        seats = [p.bot_a_id, p.bot_b_id] if index == 0 else [p.bot_b_id, p.bot_a_id]
        return FinishedGame(
            game="tetress", seats=[SeatResult(v) for v in seats], verdict=Verdict.NORMAL,
            winner_seat=0, plies=10, started_at=now, finished_at=now,
            pairing_id=p.id, game_index=index,
        )

    for p, indices in ((p1, (0, 1)), (p2, (0,))):
        assert repo.claim_pairing(p.id)
        for i in indices:
            repo.record_game(game(p, i))
    assert repo.claim_pairing(p3.id)

    def die(session, context, instances):
        if any(isinstance(o, Pairing) for o in session.dirty):
            print("dying mid-write", flush=True)
            os._exit(9)

    event.listen(Session, "before_flush", die)
    repo.record_game(game(p2, 1))
    print("not reached", flush=True)
    """
)


def _round_robin(repo: Repository, versions: list[int]) -> int:
    t = repo.create_tournament(
        TournamentSettings(
            name="class-2026",
            format=TournamentFormat.ROUND_ROBIN,
            game="tetress",
            game_params={"turn_limit": 150},
            time_control={"per_game": 180.0, "per_move": 5.0},
            memory_limit_mb=250,
            cycles=1,
            concurrency=2,
        ),
        versions,
    )
    a, b, c, d = versions
    repo.add_pairings(t.id, 1, [(a, b), (c, d)])
    repo.add_pairings(t.id, 2, [(a, c), (b, d)])
    repo.set_tournament_status(t.id, TournamentStatus.RUNNING)
    return t.id


@pytest.mark.slow
def test_killed_runner_resumes_without_replaying_finished_games(
    database_url: str, versions: list[int], make_game: MakeGame
) -> None:
    """After a runner process is killed mid-write: the half-written game is absent, the
    cut-off pairings return to pending with only their unfinished games left, and playing
    what remains completes the tournament with every game exactly once."""
    with open_database(database_url) as db:
        t_id = _round_robin(Repository(db), versions)

    crashed = subprocess.run(
        [sys.executable, "-c", CRASHING_RUNNER, database_url, str(t_id)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert crashed.returncode == 9, crashed.stderr
    assert "dying mid-write" in crashed.stdout and "not reached" not in crashed.stdout

    with open_database(database_url) as db:
        repo = Repository(db)
        p1, p2, p3, p4 = repo.pairings(t_id)
        assert repo.count_games(tournament_id=t_id) == 3  # 2 + 1; the dying write is gone

        state = repo.resume_tournament(t_id)
        assert set(state.reset) == {p2.id, p3.id}
        assert [p.id for p in state.finished] == [p1.id]
        assert [p.id for p in state.pending] == [p2.id, p3.id, p4.id]
        assert state.running == ()
        remaining = {p.id: p.remaining_games for p in state.pending}
        assert remaining == {p2.id: (1,), p3.id: (0, 1), p4.id: (0, 1)}
        assert (state.games_finished, state.games_remaining) == (3, 5)

        # Resuming again changes nothing.
        again = repo.resume_tournament(t_id)
        assert again.reset == () and again.games_remaining == 5

        for pairing in state.pending:
            assert repo.claim_pairing(pairing.id)
            for index in pairing.remaining_games:
                seats = [pairing.bot_a_id, pairing.bot_b_id]
                if index == 1:
                    seats.reverse()
                repo.record_game(make_game(seats, pairing_id=pairing.id, game_index=index))

        done = repo.tournament_state(t_id)
        assert len(done.finished) == 4 and done.games_remaining == 0
        assert repo.count_games(tournament_id=t_id) == 8
        slots = [(g.pairing_id, g.game_index) for g in repo.list_games(tournament_id=t_id)]
        assert len(slots) == len(set(slots)) == 8
        assert len(repo.game_results(tournament_id=t_id)) == 8


def test_a_pairing_is_claimed_once(repo: Repository, versions: list[int]) -> None:
    """Two workers cannot both start one pairing; a released pairing can be claimed again."""
    t_id = _round_robin(repo, versions)
    p = repo.pairings(t_id)[0]
    assert repo.claim_pairing(p.id) is True
    assert repo.claim_pairing(p.id) is False
    assert repo.tournament_state(t_id).running[0].id == p.id
    assert repo.release_pairing(p.id) is True
    assert repo.release_pairing(p.id) is False
    assert repo.claim_pairing(p.id) is True


def test_finished_and_void_pairings_are_not_claimed(
    repo: Repository, versions: list[int], make_game: MakeGame
) -> None:
    """Neither a finished nor a void pairing can be started again, and resume leaves both
    alone."""
    t_id = _round_robin(repo, versions)
    p1, p2, *_ = repo.pairings(t_id)
    repo.claim_pairing(p1.id)
    repo.record_game(make_game([p1.bot_a_id, p1.bot_b_id], pairing_id=p1.id, game_index=0))
    repo.record_game(make_game([p1.bot_b_id, p1.bot_a_id], pairing_id=p1.id, game_index=1))
    repo.void_pairing(p2.id, "delta withdrew")
    assert repo.claim_pairing(p1.id) is False
    assert repo.claim_pairing(p2.id) is False
    state = repo.resume_tournament(t_id)
    assert [p.id for p in state.finished] == [p1.id]
    assert [p.id for p in state.void] == [p2.id]
    assert state.reset == ()


def test_rounds_are_stored_once_and_byes_need_no_games(
    repo: Repository, versions: list[int]
) -> None:
    """A round cannot be paired twice (a resumed Swiss reads it back); a bye is a finished
    pairing with no games."""
    t_id = _round_robin(repo, versions)
    with pytest.raises(ConflictError):
        repo.add_pairings(t_id, 1, [(versions[0], versions[3])])
    [bye, game] = repo.add_pairings(t_id, 3, [(versions[0], None), (versions[1], versions[2])])
    assert (bye.status, bye.games_planned, bye.remaining_games) == (PairingStatus.FINISHED, 0, ())
    assert game.remaining_games == (0, 1)
    assert [p.board for p in repo.pairings(t_id, round_number=3)] == [0, 1]
    assert [p.id for p in repo.pairings(t_id, status=PairingStatus.FINISHED)] == [bye.id]
