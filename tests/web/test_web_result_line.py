"""The game page's result line (and the live page's closing one) says who won once, even when
the referee's reason closes with it (``RED has no legal move; BLUE wins``)."""

from __future__ import annotations

import re
from typing import Any

from starlette.testclient import TestClient

from engine.adjudication.verdicts import Verdict
from referee.live.hub import LiveEnd, LiveGame
from referee.storage import FinishedGame, Repository, SeatResult
from referee.web.live import end_payload


def _verdict_line(page: str) -> str:
    found = re.search(r'<p class="verdict" id="verdict">(.*?)</p>', page, re.S)
    assert found, page
    return re.sub(r"<[^>]+>", "", found.group(1))


def test_game_page_says_the_winner_once(
    client: TestClient, repo: Repository, ids: dict[str, Any]
) -> None:
    """A rules ending whose reason ends in "; BLUE wins": the line reads "BLUE wins: RED has
    no legal move." with "BLUE wins" once; a draw's "; draw" is not repeated either."""
    now = repo.get_game(ids["games"][0]).summary.finished_at
    stored = []
    for winner, reason in (
        (1, "RED has no legal move; BLUE wins"),
        (None, "the turn limit was reached after 150 moves; draw"),
    ):
        stored.append(
            repo.record_game(
                FinishedGame(
                    game="tetress",
                    seats=[SeatResult(ids["versions"][0]), SeatResult(ids["versions"][1])],
                    verdict=Verdict.NORMAL if winner is not None else Verdict.TURN_LIMIT,
                    winner_seat=winner,
                    plies=40,
                    started_at=now,
                    finished_at=now,
                    reason=reason,
                )
            )
        )
    won = _verdict_line(client.get(f"/games/{stored[0].id}").text)
    assert won.count("BLUE wins") == 1 and "RED has no legal move." in won, won
    drawn = _verdict_line(client.get(f"/games/{stored[1].id}").text)
    assert drawn.lower().count("draw") == 1, drawn
    sentence = client.get(f"/api/games/{stored[0].id}").json()["sentence"]
    assert sentence == "BLUE wins: RED has no legal move."


def test_live_end_says_the_winner_once() -> None:
    """The live page's closing sentence follows the same rule."""
    live = LiveGame("u", "tetress", ("a", "b"), ("RED", "BLUE"), "")
    end = LiveEnd("0-1", Verdict.NORMAL, None, "RED has no legal move; BLUE wins", 1)
    assert end_payload(live, end)["sentence"] == "BLUE wins: RED has no legal move."
