"""The leaderboard rows, forfeits by verdict and the head-to-head cross table."""

from __future__ import annotations

import json

import pytest

from referee.ratings.results import GameResult
from referee.ratings.table import CSV_FIELDS, build_leaderboard, cross_table

GAMES = [
    GameResult("alpha", "beta", 1.0),
    GameResult("beta", "alpha", 0.5),
    GameResult("alpha", "gamma", 1.0),
    GameResult("gamma", "alpha", 0.0, "time", forfeit=True),
    GameResult("beta", "gamma", 1.0, "crash", forfeit=True),
    GameResult("gamma", "beta", 1.0),
    GameResult("gamma", "beta", 1.0, "memory", forfeit=True, void=True),
]


def test_rows_count_wins_draws_losses_and_score() -> None:
    """W/D/L and score % come from the counted games only (the voided one is left out)."""
    board = build_leaderboard(GAMES)
    alpha, beta, gamma = (board.row(p) for p in ("alpha", "beta", "gamma"))
    assert (alpha.wins, alpha.draws, alpha.losses, alpha.games) == (3, 1, 0, 4)
    assert alpha.score_pct == pytest.approx(87.5)
    assert (beta.wins, beta.draws, beta.losses) == (1, 1, 2)
    assert (gamma.wins, gamma.draws, gamma.losses) == (1, 0, 3)
    assert [r.player for r in board.rows] == ["alpha", "beta", "gamma"]
    assert [r.rank for r in board.rows] == [1, 2, 3]
    assert board.fit.games == 6


def test_forfeits_are_counted_by_verdict_against_the_forfeiter() -> None:
    """Each forfeit is charged to its loser under its verdict, voided ones included."""
    board = build_leaderboard(GAMES)
    assert board.row("alpha").forfeits == {}
    assert board.row("gamma").forfeits == {"time": 1, "crash": 1}
    assert board.row("beta").forfeits == {"memory": 1}
    assert board.row("gamma").forfeit_total == 2


def test_cross_table_mirrors() -> None:
    """a's record against b is b's record against a turned round."""
    table = cross_table(GAMES)
    ab, ba = table["alpha"]["beta"], table["beta"]["alpha"]
    assert (ab.wins, ab.draws, ab.losses) == (1, 1, 0)
    assert (ba.wins, ba.draws, ba.losses) == (0, 1, 1)
    assert table["beta"]["gamma"].games == 2
    assert table["beta"]["gamma"].points == 1.0


def test_players_without_games_get_an_unrated_last_row() -> None:
    """A registered bot with no counted game is listed last with no rating or score."""
    board = build_leaderboard(GAMES, players=["delta"])
    last = board.rows[-1]
    assert (last.player, last.elo, last.ci95, last.score_pct, last.games) == (
        "delta",
        None,
        None,
        None,
        0,
    )
    assert last.elo_incremental == 1500.0
    assert "delta" not in board.fit.players


def test_export_is_plain_json_and_csv() -> None:
    """as_dict survives strict JSON (no NaN) and CSV rows carry every column."""
    board = build_leaderboard(GAMES, anchor="beta", anchor_rating=1000.0)
    text = json.dumps(board.as_dict(), allow_nan=False)
    data = json.loads(text)
    assert data["anchor"] == "beta = 1000"
    assert data["connected"] is True
    assert data["rows"][1]["elo"] == 1000.0
    assert data["los"]["alpha"]["beta"] > 0.5
    assert set(board.rows[0].as_csv_row()) == set(CSV_FIELDS)
    assert board.row("gamma").as_csv_row()["forfeits"] == "crash:1;time:1"
