"""The opening explorer folds openings that are the same game on the torus into one line."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from starlette.testclient import TestClient

from engine.adjudication.verdicts import Verdict
from engine.tetress import Placement
from engine.tetress.symmetry import TURNS
from referee.storage import FinishedGame, Repository, SeatResult

N = 11


def _turned(text: str, turn: int, dr: int, dc: int) -> str:
    cells = []
    for r, c in Placement.parse(text).coords:
        tr, tc = TURNS[turn](r, c)
        cells.append(((tr + dr) % N, (tc + dc) % N))
    return str(Placement.from_cells(cells))


# The site's web front analyses stored games in a child process when it finds one unanalysed
# (gameeval), which can start while this test runs.
@pytest.mark.slow
def test_the_explorer_folds_openings_equal_on_the_torus(
    client: TestClient, repo: Repository, ids: dict[str, Any]
) -> None:
    """A stored game and its copy turned a quarter and shifted across the torus's edges are one
    line of the explorer, both games on it; every first move is one of the five free
    tetrominoes; the page says lines are folded."""
    source = repo.get_game(ids["games"][0])
    moves = [{**m, "move": _turned(str(m["move"]), 1, 7, 9)} for m in source.moves]
    when = datetime(2026, 11, 2, tzinfo=UTC)
    copy = repo.record_game(
        FinishedGame(
            game="tetress",
            seats=[SeatResult(ids["versions"][1]), SeatResult(ids["versions"][0])],
            verdict=Verdict.NORMAL,
            winner_seat=source.summary.winner_seat,
            plies=len(moves),
            started_at=when,
            finished_at=when,
            moves=moves,
        )
    ).id
    tree = client.get("/api/explorer/tetress").json()
    assert tree["games"] == 13
    assert len(tree["moves"]) <= 5, [m["move"] for m in tree["moves"]]
    (line,) = [m for m in tree["moves"] if source.summary.id in m["game_ids"]]
    assert copy in line["game_ids"]
    for depth in range(3):
        line = next(m for m in line["next"] if source.summary.id in m["game_ids"])
        assert copy in line["game_ids"], f"the copy left the line at ply {depth + 2}"
    assert 'id="explorer-folded"' in client.get("/explorer/tetress").text
