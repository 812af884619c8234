"""The tournament runner end to end: real SQLite files, real launched bot processes."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tournament_helpers import COURSE_RANDOM, CRASH, GREEDY, ILLEGAL, RANDOM, make_tournament

from engine.adjudication.verdicts import Verdict
from engine.records import read_record
from referee.play.bots import resolve_bot
from referee.storage import (
    ForfeitPolicy,
    PairingStatus,
    Repository,
    TournamentFormat,
    TournamentStatus,
)
from referee.tournament.runner import RunSummary, TournamentRunner
from referee.tournament.standings import standings

# Every test here starts processes (bots, the CLI, fresh interpreters).
pytestmark = pytest.mark.slow


def _run(repo: Repository, name: str, **kwargs: Any) -> RunSummary:
    return asyncio.run(TournamentRunner(repo, name, **kwargs).run())


def test_round_robin_plays_each_pair_twice_with_sides_swapped(tmp_path: Path) -> None:
    """Every pair meets once per cycle as a game pair (first seat swapped), each game is stored
    with a readable record, and the tables and the ladder are saved at the end."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    t = make_tournament(
        repo, "rr", TournamentFormat.ROUND_ROBIN, [RANDOM, GREEDY, COURSE_RANDOM], cycles=1
    )
    summary = _run(repo, "rr", concurrency=2)
    assert summary.complete
    assert repo.get_tournament(t.id).status is TournamentStatus.FINISHED
    pairings = repo.pairings(t.id)
    assert len([p for p in pairings if p.bot_b_id is not None]) == 3
    met = Counter(frozenset((p.bot_a_id, p.bot_b_id)) for p in pairings)
    assert set(met.values()) == {1}
    for p in pairings:
        if p.bot_b_id is None:  # a bye (three bots): stored finished, with no games
            assert p.games_planned == 0 and p.status is PairingStatus.FINISHED
            continue
        games = sorted(repo.list_games(pairing_id=p.id), key=lambda g: g.game_index)
        assert [g.game_index for g in games] == [0, 1]
        assert [g.seats[0].bot_version_id for g in games] == [p.bot_a_id, p.bot_b_id]
        assert p.status is PairingStatus.FINISHED
    games = repo.list_games(tournament_id=t.id)
    assert len(games) == 6 and all(g.counted and g.verdict is not Verdict.ABORTED for g in games)
    detail = repo.get_game(games[0].id)
    record = read_record(detail.record_text or "")
    assert len(record.moves) == detail.summary.plies == len(detail.moves)
    assert record.event == "rr" and record.result == detail.summary.result
    labels = {v.id: v.label for v in repo.list_bot_versions()}
    assert record.players == tuple(labels[s.bot_version_id] for s in detail.summary.seats)
    table = repo.latest_ratings("ml_elo", tournament_id=t.id)
    assert table is not None and table.games_counted == 6 and len(table.rows) == 3
    assert repo.latest_ratings("k_elo", tournament_id=t.id) is not None
    ladder = repo.latest_ratings("openskill", ladder="main")
    assert ladder is not None and ladder.games_counted == 6
    st = standings(repo, t.id)
    assert sum(r.games for r in st.board.rows) == 12


def test_swiss_pairs_round_by_round_from_stored_results(tmp_path: Path) -> None:
    """A Swiss tournament stores each round only when the previous one is complete, and two
    rounds of four bots never repeat a pairing."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    bots = [RANDOM, GREEDY, COURSE_RANDOM, f"{RANDOM}:RandomBot"]
    t = make_tournament(repo, "swiss", TournamentFormat.SWISS, bots, rounds=2)
    assert _run(repo, "swiss").complete
    pairings = repo.pairings(t.id)
    assert sorted({p.round for p in pairings}) == [1, 2]
    pairs = [frozenset((p.bot_a_id, p.bot_b_id)) for p in pairings]
    assert len(pairs) == 4 and len(set(pairs)) == 4
    round_one_done = max(
        g.finished_at for p in pairings if p.round == 1 for g in repo.list_games(pairing_id=p.id)
    )
    round_two_start = min(
        g.started_at for p in pairings if p.round == 2 for g in repo.list_games(pairing_id=p.id)
    )
    assert round_two_start >= round_one_done
    assert repo.count_games(tournament_id=t.id) == 8


def test_gauntlet_challenger_meets_the_whole_field(tmp_path: Path) -> None:
    """In a gauntlet every pairing includes the challenger (here not the first entrant)."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    challenger = resolve_bot(repo, GREEDY)
    # The challenger is a tournament option (the CLI's --challenger stores the version id).
    t2 = make_tournament(
        repo,
        "g2",
        TournamentFormat.GAUNTLET,
        [RANDOM, GREEDY, COURSE_RANDOM],
        cycles=1,
        options={"challenger": str(challenger.id)},
    )
    assert _run(repo, "g2").complete
    pairings = repo.pairings(t2.id)
    assert len(pairings) == 2
    assert all(challenger.id in (p.bot_a_id, p.bot_b_id) for p in pairings)
    assert repo.count_games(tournament_id=t2.id) == 4


def test_forfeit_policy_loss_counts_and_void_voids_but_keeps_the_verdict(tmp_path: Path) -> None:
    """Illegal-move and crash forfeits lose under "loss"; under "void" the same games are
    stored with their verdicts, not replayed, left out of W/D/L, and still listed as
    forfeits."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    make_tournament(repo, "loss", TournamentFormat.ROUND_ROBIN, [ILLEGAL, CRASH, RANDOM])
    make_tournament(
        repo, "void", TournamentFormat.ROUND_ROBIN, [ILLEGAL, RANDOM], forfeit=ForfeitPolicy.VOID
    )
    assert _run(repo, "loss").complete
    assert _run(repo, "void").complete

    loss = standings(repo, repo.get_tournament("loss").id).board
    illegal = loss.row("IllegalBot@" + repo.find_bot_version("IllegalBot").version)
    crash = loss.row("CrashBot@" + repo.find_bot_version("CrashBot").version)
    rnd = loss.row("random_bot@" + repo.find_bot_version("random_bot").version)
    assert (rnd.wins, rnd.losses) == (4, 0)
    # Against each other the first mover forfeits first: each wins the game it moves second.
    assert (illegal.wins, illegal.losses, illegal.forfeits) == (1, 3, {"illegal_move": 3})
    assert (crash.wins, crash.losses, crash.forfeits) == (1, 3, {"runtime_error": 3})

    void_t = repo.get_tournament("void")
    games = repo.list_games(tournament_id=void_t.id)
    assert len(games) == 2
    assert all(g.voided and g.counted and g.verdict is Verdict.ILLEGAL_MOVE for g in games)
    assert all(g.offender_seat is not None for g in games)
    board = standings(repo, void_t.id).board
    row = board.row("IllegalBot@" + repo.find_bot_version("IllegalBot").version)
    assert (row.games, row.forfeits) == (0, {"illegal_move": 2})
    assert repo.count_games(tournament_id=void_t.id) == 0


def test_a_game_no_bot_joins_is_aborted_retried_then_stored_void(tmp_path: Path) -> None:
    """Bots that exit before connecting abort the game (never a loss): each attempt is stored
    for its record, and the third is given up (stored void with the reason, holding its slot),
    so the tournament finishes; the same outcome as on the workers
    (tests/workers/test_worker_game.py)."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    make_tournament(
        repo,
        "broken",
        TournamentFormat.ROUND_ROBIN,
        ["cmd:exit 3", "cmd:exit 4"],
        games_per_pairing=1,
    )
    summary = _run(repo, "broken")
    assert summary.complete and summary.given_up == 1
    t = repo.get_tournament("broken")
    assert t.status is TournamentStatus.FINISHED
    games = repo.list_games(tournament_id=t.id)
    # The three aborted attempts kept for their records (no slot), then the void holding it.
    assert [g.counted for g in games] == [False, False, False, True]
    assert all(g.verdict is Verdict.ABORTED for g in games)
    void = games[-1]
    assert void.voided and void.result == "*"
    assert void.reason == f"void: given up after 3 failed attempts (attempt 3: {games[2].reason})"
    assert [p.status for p in repo.pairings(t.id)] == [PairingStatus.FINISHED]
    assert repo.tournament_state(t.id).games_remaining == 0


def test_max_attempts_sets_when_a_game_is_given_up(tmp_path: Path) -> None:
    """``max_attempts`` is the number of aborted attempts before the slot is stored void."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    make_tournament(repo, "broken", TournamentFormat.ROUND_ROBIN, ["cmd:true", "cmd:exit 3"])
    summary = _run(repo, "broken", max_attempts=2)
    assert summary.complete and summary.given_up == 2
    games = repo.list_games(tournament_id=repo.get_tournament("broken").id)
    assert [g.counted for g in games].count(True) == 2 and len(games) == 6
    assert all("given up after 2 failed attempts" in g.reason for g in games if g.counted)


@pytest.mark.postgres
def test_runner_on_postgresql(pg_url: str) -> None:
    """The same runner on PostgreSQL: a small round robin is stored, counted and rated."""
    repo = Repository.open(pg_url)
    try:
        t = make_tournament(repo, "pg", TournamentFormat.ROUND_ROBIN, [RANDOM, GREEDY])
        assert _run(repo, "pg").complete
        assert repo.count_games(tournament_id=t.id) == 2
        assert repo.latest_ratings("ml_elo", tournament_id=t.id) is not None
        assert repo.latest_ratings("openskill", ladder="main") is not None
    finally:
        repo.close()
