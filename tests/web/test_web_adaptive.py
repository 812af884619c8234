"""An adaptive tournament's page and JSON say how sure each neighbours' order is."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.testclient import TestClient
from webdata import play

from engine.adjudication.verdicts import Verdict
from referee.storage import (
    FinishedGame,
    Repository,
    SeatResult,
    TournamentFormat,
    TournamentSettings,
)


def _adaptive_with_games(repo: Repository, versions: list[int]) -> int:
    """An adaptive tournament of the first three bots with six engine-played games."""
    t = repo.create_tournament(
        TournamentSettings(
            name="Final",
            format=TournamentFormat.ADAPTIVE,
            game="tetress",
            options={"confidence": 0.9},
        ),
        versions[:3],
    )
    labels = {v.id: v.label for v in repo.list_bot_versions()}
    start = datetime(2026, 11, 2, tzinfo=UTC)
    for i in range(6):
        a, b = versions[i % 3], versions[(i + 1) % 3]
        played = play("tetress", 100 + i, (labels[a], labels[b]))
        repo.record_game(
            FinishedGame(
                game="tetress",
                seats=[SeatResult(a), SeatResult(b)],
                verdict=Verdict.NORMAL,
                winner_seat=played["winner"],
                plies=len(played["moves"]),
                started_at=start + timedelta(minutes=i),
                finished_at=start + timedelta(minutes=i, seconds=30),
                reason=f"ended: {played['termination']}",
                termination=played["termination"],
                moves=played["moves"],
                record_text=played["record_text"],
                record_json=played["record_json"],
                tournament_id=t.id,
            )
        )
    return t.id


def test_adaptive_tournament_page_shows_each_neighbours_order_confidence(
    client: TestClient, repo: Repository, ids: dict[str, Any]
) -> None:
    """The page has the order table (two neighbour pairs among three bots, each with its
    likelihood and settled/open at the tournament's 90%); the JSON has the same pairs, the
    likelihoods matching the LOS matrix; a round robin's page has no such table."""
    tid = _adaptive_with_games(repo, ids["versions"])
    page = client.get(f"/tournaments/{tid}").text
    assert 'id="order"' in page and "settled at 90%" in page
    data = client.get(f"/api/tournaments/{tid}").json()
    assert data["format"] == "adaptive" and data["confidence"] == 0.9
    order = data["order"]
    assert len(order) == 2
    rows = [r["player"] for r in data["rows"]]
    for k, pair in enumerate(order):
        assert (pair["upper"], pair["lower"]) == (rows[k], rows[k + 1])
        assert pair["p_upper_stronger"] == data["los"][pair["upper"]][pair["lower"]]
        assert 0.5 <= pair["p_upper_stronger"] <= 1.0
    assert 'id="order"' not in client.get(f"/tournaments/{ids['tournament']}").text
