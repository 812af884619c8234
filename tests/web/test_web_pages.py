"""Route tests for the read-only pages and their JSON twins (Starlette's test client over a
real SQLite file with engine-played games)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest
from starlette.testclient import TestClient
from webdata import HOSTILE, alphas_game, sign_in

from referee.storage import Repository
from referee.web.security import CSP


class _Inline(HTMLParser):
    """Collects what the CSP would refuse: inline scripts, style attributes, event handlers."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {k for k, _ in attrs}
        if tag == "script":
            if "src" not in names:
                self.problems.append("inline <script>")
            self._in_script = True
        if tag == "style":
            self.problems.append("<style> element")
        for name in names:
            if name == "style" or name.startswith("on"):
                self.problems.append(f"{tag} {name}=")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.problems.append("script body")


def pages(ids: dict[str, Any]) -> list[str]:
    game = ids["games"][0]
    return [
        "/leaderboard/tetress",
        "/leaderboard/att",
        "/leaderboard/tetress?sort=games&dir=desc",
        "/tournaments",
        f"/tournaments/{ids['tournament']}",
        f"/bots/{ids['bots']['alpha']}",
        f"/bots/{ids['bots'][HOSTILE]}",
        "/games",
        "/games?game=att",
        f"/games/{game}",
        f"/games/{game}?ply=2",
        f"/games/{game}/ply/3",
        "/live",
        "/signin",
    ]


def test_every_page_renders(client: TestClient, ids: dict[str, Any]) -> None:
    """Every page answers 200 with HTML."""
    for path in pages(ids):
        response = client.get(path)
        assert response.status_code == 200, path
        assert response.headers["content-type"].startswith("text/html"), path


def test_pages_satisfy_their_content_security_policy(
    client: TestClient, ids: dict[str, Any]
) -> None:
    """Each page carries the security headers, and holds nothing the CSP forbids (no inline
    script, style attribute or event handler)."""
    for path in pages(ids):
        response = client.get(path)
        assert response.headers["content-security-policy"] == CSP
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"
        parser = _Inline()
        parser.feed(response.text)
        assert parser.problems == [], (path, parser.problems)


def test_hostile_bot_name_is_escaped_everywhere(client: TestClient, ids: dict[str, Any]) -> None:
    """A bot named like a script tag shows as text on every page, never as markup."""
    seen = 0
    for path in pages(ids):
        text = client.get(path).text
        assert HOSTILE not in text, path
        seen += "&lt;script&gt;alert(" in text
    assert seen >= 3


def test_leaderboard_lists_bots_with_ratings_and_sorts(
    client: TestClient, ids: dict[str, Any]
) -> None:
    """The Tetress table shows each bot by its name, rating ± interval, W/D/L, provisional
    marks; sorting by games puts the bot with most games first, and the htmx request gets
    only the table."""
    page = client.get("/leaderboard/tetress").text
    assert ">alpha</a>" in page and ">beta</a>" in page
    assert re.search(r"\d+ <span class=\"ci\">± \d+</span>", page)
    assert 'class="prov"' in page
    assert 'id="ladder"' in page
    data = client.get("/api/leaderboard/tetress?sort=games&dir=asc").json()
    games = [r["games"] for r in data["rows"]]
    assert games == sorted(games, reverse=True)
    assert all(r["provisional"] for r in data["rows"])
    fragment = client.get("/leaderboard/tetress?sort=bot", headers={"HX-Request": "true"}).text
    assert fragment.startswith('<table class="data" id="board"')
    assert "<html" not in fragment


def test_att_has_its_own_table(client: TestClient) -> None:
    """ATT games are ranked apart from Tetress ones."""
    tetress = client.get("/api/leaderboard/tetress").json()
    att = client.get("/api/leaderboard/att").json()
    assert att["games"] == 2
    assert tetress["games"] == 12


def test_tournament_page_has_standings_cross_table_los_and_progress(
    client: TestClient, ids: dict[str, Any]
) -> None:
    """The tournament page shows standings, the cross table, the LOS matrix and progress."""
    page = client.get(f"/tournaments/{ids['tournament']}").text
    for part in ('id="standings"', 'id="cross"', 'id="los"', 'id="progress"', "<progress"):
        assert part in page
    data = client.get(f"/api/tournaments/{ids['tournament']}").json()
    assert data["name"] == "Week 1"
    assert {r["bot"] for r in data["rows"]} == {"alpha", "beta", HOSTILE}
    assert data["cross_table"] and data["los"]


def test_bot_page_has_versions_plot_opponents_and_games(
    client: TestClient, ids: dict[str, Any]
) -> None:
    """A bot page lists its versions, draws its rating history as SVG, and gives results by
    opponent and its recent games."""
    page = client.get(f"/bots/{ids['bots']['alpha']}").text
    assert 'id="versions"' in page and "v1" in page and "v2" in page
    assert '<svg xmlns="http://www.w3.org/2000/svg" class="plot"' in page
    assert "<polyline" in page
    data = client.get(f"/api/bots/{ids['bots']['alpha']}").json()
    assert {v["version"] for v in data["versions"]} == {"v1", "v2"}
    opponents = data["games"]["tetress"]["opponents"]
    assert opponents and all(o["bot"] != "alpha" for o in opponents)
    assert data["recent"]


def test_game_page_shows_board_moves_clocks_verdict_and_downloads(
    client: TestClient, ids: dict[str, Any]
) -> None:
    """The game page: SVG board, move list with charged, wall and CPU time and memory, the
    clock charged, both clocks, the verdict sentence, download links, and the record's
    annotations."""
    game = ids["games"][0]
    page = client.get(f"/games/{game}").text
    assert page.count('id="clock-') == 2
    assert '<svg xmlns="http://www.w3.org/2000/svg"' in page
    cell = r"\d\.\d{3} s</td><td class=\"num\">"
    clock = r"\d+:\d\d\.\d</td><td class=\"num\">"
    assert re.search(cell + clock + cell * 2 + r"\d+\.\d MB", page)
    assert 'id="charged-clock"' in page and "Clocks charged <b>CPU time</b>" in page
    assert 'id="verdict"' in page and "wins:" in page
    assert f"/games/{game}/record.pgn" in page and f"/games/{game}/record.json" in page
    assert 'class="annotation">!</span>' in page and "a fine move" in page
    pgn = client.get(f"/games/{game}/record.pgn")
    assert pgn.status_code == 200 and pgn.text.startswith("[Event")
    assert "attachment" in pgn.headers["content-disposition"]
    assert client.get(f"/games/{game}/record.json").json()["moves"]


def test_stepping_changes_the_board_and_the_clocks(client: TestClient, ids: dict[str, Any]) -> None:
    """The ply fragment for ply n shows the position after n moves with the n-th move's four
    cells outlined, and links to n-1 and n+1."""
    game = ids["games"][0]
    data = client.get(f"/api/games/{game}").json()
    first = client.get(f"/games/{game}/ply/0").text
    third = client.get(f"/games/{game}/ply/3").text
    assert first.startswith('<div id="replay" data-ply="0"')
    assert third.count('class="piece') > first.count('class="piece')
    assert third.count('<rect class="last"') == 4 and '<rect class="last"' not in first
    assert f"/games/{game}/ply/2" in third and f"/games/{game}/ply/4" in third
    assert "1:00.0" in first  # both clocks full before the first move
    assert len(data["positions"]) == len(data["moves"]) + 1


def test_json_endpoints_answer(client: TestClient, ids: dict[str, Any]) -> None:
    """The JSON twins of the lists answer with the same data."""
    assert len(client.get("/api/games?limit=5").json()) == 5
    assert [t["name"] for t in client.get("/api/tournaments").json()] == ["Week 1"]
    assert client.get("/api/live").json() == []


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/leaderboard/chess", 404),
        ("/tournaments/999", 404),
        ("/tournaments/abc", 404),
        ("/bots/999", 404),
        ("/games/999", 404),
        ("/games/1/ply/9999", 404),
        ("/games/1?ply=-1", 400),
        ("/games/1?ply=x", 400),
        ("/games/1/record.exe", 404),
        ("/leaderboard/tetress?sort=__class__", 400),
        ("/games?limit=100000", 400),
        ("/live/nope", 404),
        ("/live/nope/events", 404),
        ("/nowhere", 404),
        ("/static/../context.py", 404),
    ],
)
def test_bad_addresses_get_clear_errors(client: TestClient, path: str, status: int) -> None:
    """Unknown ids and bad parameters are a 4xx page, never a crash or a traceback."""
    response = client.get(path)
    assert response.status_code == status
    assert "Traceback" not in response.text


def test_api_errors_are_json(client: TestClient) -> None:
    """Errors under /api/ are JSON objects with the status and a reason."""
    response = client.get("/api/games/999")
    assert response.status_code == 404
    assert response.json() == {"error": "no game 999", "status": 404}
    assert client.get("/api/leaderboard/nope").json()["status"] == 404


def test_a_new_game_reaches_the_tables(client: TestClient, repo: Any, ids: dict[str, Any]) -> None:
    """Once a game is stored the tables are rebuilt from it (the cache notices the change)."""
    import time

    from engine.adjudication.verdicts import Verdict
    from referee.storage import FinishedGame, SeatResult

    before = client.get("/api/leaderboard/tetress").json()["games"]
    now = repo.get_game(ids["games"][0]).summary.finished_at
    repo.record_game(
        FinishedGame(
            game="tetress",
            seats=[SeatResult(ids["versions"][0]), SeatResult(ids["versions"][1])],
            verdict=Verdict.TIME,
            winner_seat=1,
            offender_seat=0,
            plies=0,
            started_at=now,
            finished_at=now,
            reason="RED ran out of time",
        )
    )
    deadline = time.monotonic() + 10
    after = before
    while after == before and time.monotonic() < deadline:
        after = client.get("/api/leaderboard/tetress").json()["games"]
        time.sleep(0.05)
    assert after == before + 1


def test_validation_games_are_shown_only_to_their_uploader(
    client: TestClient, repo: Repository, ids: dict[str, Any]
) -> None:
    """A validation game (an upload's private check) has no page, record download or API
    view for the public and stays out of the games list; its uploader, signed in, sees it."""
    from referee.storage.enums import GameKind

    check = alphas_game(repo, ids, {"stderr": "alpha checked"}, kind=GameKind.VALIDATION)
    paths = (f"/games/{check.id}", f"/games/{check.id}/record.pgn", f"/api/games/{check.id}")
    for path in paths:
        assert client.get(path).status_code == 404, path
    assert f'href="/games/{check.id}"' not in client.get("/games?limit=500").text
    assert client.get(f"/games/{ids['games'][0]}").status_code == 200
    sign_in(client, ids["token"])  # alpha's owner
    for path in paths:
        assert client.get(path).status_code == 200, path
    assert "alpha checked" in client.get(f"/games/{check.id}").text


def test_every_score_says_what_it_is(client: TestClient, ids: dict[str, Any]) -> None:
    """Each page with a score figure says in the page what the score is (points per game as a
    percentage, with what a win, a draw and a loss count), and its score headings say it too."""
    alpha, beta = ids["bots"]["alpha"], ids["bots"]["beta"]
    for path in (
        "/leaderboard/tetress",
        f"/bots/{alpha}",
        f"/tournaments/{ids['tournament']}",
        f"/bots/{alpha}/vs/{beta}",
        "/explorer/tetress",
    ):
        page = client.get(path).text
        note = re.search(r'<p class="note score-note">(.*?)</p>', page, re.S)
        assert note is not None, f"{path} does not say what its score is"
        assert "points per game as a percentage" in note.group(1)
        assert "a win is 1 point, a draw ½, a loss 0" in note.group(1)
        for head in re.findall(r"<th[^>]*>(?:<a [^>]*>)?score(?:</a>)?</th>", page):
            assert 'title="points per game' in head, f"{path}: {head}"
