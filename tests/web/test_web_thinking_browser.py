"""The game page of a game between two reference bots, in a real Chromium: their think
records (PV text and ghost pieces), the chart (a click moves the board), the replay player,
"why this game ended" naming the turning point once the reference evaluation is computed, and a
think record kept from a signed-out visitor but shown to its owner.

One ``referee serve`` process over a fresh SQLite file; the two reference bots are real client
processes playing casual games on it (alice's and bob's), stopped once a game is stored.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_web_browser as shared
from test_web_browser import ARTIFACTS, _free_port, _wait_http

from referee.storage import Repository
from referee.storage.enums import Role

pytestmark = pytest.mark.slow

# The real Chromium and a fresh tab per test (console errors fail the test), as the other
# browser tests have them.
browser = shared.browser
page = shared.page

#: Long enough for a real game, for the turning point to fall after the opening plies.
MIN_PLIES = 12


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return json.loads(reply.read())


def _stored_game(base: str, deadline: float) -> dict[str, Any]:
    """The first stored game of at least MIN_PLIES plies (waits for one)."""
    while time.monotonic() < deadline:
        for line in _get_json(f"{base}/api/games"):
            if line["plies"] >= MIN_PLIES and line["verdict"] == "normal":
                return _get_json(f"{base}/api/games/{line['id']}")  # type: ignore[no-any-return]
        time.sleep(1.0)
    raise TimeoutError("no game was stored in time")


@pytest.fixture(scope="module")
def played(tmp_path_factory: Any) -> Iterator[dict[str, Any]]:
    """A server with a stored game between alice's and bob's reference bots."""
    work = tmp_path_factory.mktemp("thinking")
    db = work / "arena.db"
    repo = Repository.open(str(db))
    for name in ("alice", "bob", "teach"):
        repo.create_player(name)
    tokens = {
        "alice": repo.issue_token("alice", label="test"),
        "bob": repo.issue_token("bob", label="test"),
        "teach": repo.issue_token("teach", label="test", role=Role.INSTRUCTOR),
    }
    repo.close()
    port = _free_port()
    command = [sys.executable, "-m", "referee.commands.main", "serve", "--db", str(db)]
    command += ["--listen", "127.0.0.1:0", "--address-file", str(work / "addr")]
    command += ["--web", f"127.0.0.1:{port}", "--game", "tetress", "--log-level", "WARNING"]
    server = subprocess.Popen(command, cwd=work)
    bots: list[subprocess.Popen[bytes]] = []
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_http(f"{base}/healthz", server, time.monotonic() + 120)
        address = (work / "addr").read_text().split()[0]
        for who, level in (("alice", 1), ("bob", 2)):
            bot = f"client_sdk.examples.reference_bot:Level{level}"
            client = [sys.executable, "-m", "client_sdk", "--server", address]
            client += ["--token", tokens[who], bot]
            bots.append(subprocess.Popen(client, cwd=work, env=dict(os.environ)))
        game = _stored_game(base, time.monotonic() + 300)
        for bot in bots:
            bot.terminate()
        yield {"base": base, "game": game, "tokens": tokens}
    finally:
        for proc in [*bots, server]:
            proc.terminate()
        for proc in [*bots, server]:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()


def _sign_in(page: Any, base: str, token: str) -> None:
    page.goto(f"{base}/signin")
    page.fill("input[name=token]", token)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/me")


def _seat_of(game: dict[str, Any], owner: str) -> int:
    return [p.get("owner") for p in game["players"]].index(owner)


def _ply_with_pv(game: dict[str, Any], seat: int) -> int:
    """A ply by ``seat`` whose think record has a PV of two moves or more."""
    for row in game["rows"]:
        if row["seat"] == game["seat_names"][seat] and row["ply"] > 1:
            return int(row["ply"])
    raise AssertionError("no ply by that seat")


def test_reference_bots_show_their_pvs_and_the_chart(played: Any, page: Any) -> None:
    """An instructor sees both bots' think records: depth, score and PV text, the PV as
    ghost pieces on the board, and the chart with the bots' own scores and legal moves."""
    base, game = played["base"], played["game"]
    _sign_in(page, base, played["tokens"]["teach"])
    for seat in (0, 1):
        ply = _ply_with_pv(game, seat)
        page.goto(f"{base}/games/{game['id']}?ply={ply}")
        assert page.locator("#think dt", has_text="depth").count() == 1
        pv = page.inner_text("#pv")
        assert game["rows"][ply - 1]["move"] in pv
    page.goto(f"{base}/games/{game['id']}?ply=2")
    chart = page.locator("svg.game-chart")
    assert chart.count() == 1
    titles = chart.locator(".panel-title").all_text_contents()
    assert any("own score" in t for t in titles) and any("Legal moves" in t for t in titles)
    assert chart.locator("a.ply-link").count() == len(game["rows"]) + 1
    # The instructor's own view of the rows (the session cookie goes with the request).
    rows = page.request.get(f"{base}/api/games/{game['id']}").json()["rows"]
    assert all(row["search"] is not None for row in rows[:-1])
    with_pv = [r["ply"] for r in rows if len(r["search"]["pv"]) > 1 and r["ply"] < len(rows)]
    assert with_pv, "no move came with a PV of two moves or more"
    page.goto(f"{base}/games/{game['id']}?ply={with_pv[0]}")
    assert page.locator("#replay .board svg g.ghost").count() >= 4
    page.screenshot(path=str(ARTIFACTS / "thinking-instructor.png"), full_page=True)


def test_clicking_a_chart_point_moves_the_board_and_the_player_plays(
    played: Any, page: Any
) -> None:
    """A click on a chart column shows that ply (board, ply count, address); play steps on
    by itself until paused."""
    base, game = played["base"], played["game"]
    page.goto(f"{base}/games/{game['id']}?ply=0")
    page.locator("svg.game-chart a.ply-link[data-ply='5'] rect").click(force=True)
    page.wait_for_selector("#replay[data-ply='5']")
    assert "ply=5" in page.url
    assert page.inner_text("#ply-count").startswith("ply 5 ")
    page.select_option("#speed", "4")
    page.click("#play")
    # Played on past ply 6 (read, not waited for as one value: on a busy machine the player
    # may step past any one ply between two looks).
    for _ in range(300):
        if int(page.get_attribute("#replay", "data-ply")) > 6:
            break
        page.wait_for_timeout(100)
    assert int(page.get_attribute("#replay", "data-ply")) > 6
    page.click("#play")
    # Paused, and the step that may have been on its way when the button was pressed has
    # landed: only then is the ply the one the player stopped at.
    page.wait_for_selector("#play:has-text('play')")
    page.wait_for_load_state("networkidle")
    stopped = int(page.get_attribute("#replay", "data-ply"))
    page.wait_for_timeout(1500)  # not a wait: several steps at 4x, none may come
    assert int(page.get_attribute("#replay", "data-ply")) == stopped


def test_the_summary_names_the_turning_point(played: Any, page: Any) -> None:
    """Once the reference evaluation is computed (in the background), "why this game ended"
    names the turning point with a link that moves the board there."""
    base, game = played["base"], played["game"]
    deadline = time.monotonic() + 600
    while True:
        page.goto(f"{base}/games/{game['id']}")
        if page.locator("#why li.turning").count():
            break
        assert time.monotonic() < deadline, "the reference evaluation never arrived"
        page.wait_for_timeout(3000)
    text = page.inner_text("#why li.turning")
    assert text.startswith("Turning point, ply ")
    ply = int(text.removeprefix("Turning point, ply ").split()[0])
    page.click("#why li.turning a")
    page.wait_for_selector(f"#replay[data-ply='{ply}']")
    assert page.locator("svg.game-chart .panel-title", has_text="Reference").count() == 1
    page.screenshot(path=str(ARTIFACTS / "thinking-summary.png"), full_page=True)


def test_a_private_think_record_is_hidden_from_visitors_and_shown_to_its_owner(
    played: Any, page: Any
) -> None:
    """Outside a closed tournament, a signed-out visitor sees no think record (page, ghosts,
    API rows, record download); the bot's owner sees their own."""
    base, game = played["base"], played["game"]
    seat = _seat_of(game, "alice")
    ply = _ply_with_pv(game, seat)
    page.goto(f"{base}/games/{game['id']}?ply={ply}")
    assert page.locator("#think-hidden").count() == 1
    assert page.locator("#pv").count() == 0
    assert page.locator("#replay .board svg g.ghost").count() == 0
    public = _get_json(f"{base}/api/games/{game['id']}")
    assert all(row["search"] is None for row in public["rows"])
    with urllib.request.urlopen(f"{base}/games/{game['id']}/record.pgn", timeout=10) as r:
        assert "pv=" not in r.read().decode()
    _sign_in(page, base, played["tokens"]["alice"])
    page.goto(f"{base}/games/{game['id']}?ply={ply}")
    assert page.locator("#think-hidden").count() == 0
    assert game["rows"][ply - 1]["move"] in page.inner_text("#pv")
    other = _ply_with_pv(game, 1 - seat)
    page.goto(f"{base}/games/{game['id']}?ply={other}")
    assert page.locator("#think-hidden").count() == 1
    page.screenshot(path=str(ARTIFACTS / "thinking-owner.png"), full_page=True)


@pytest.fixture(autouse=True)
def _artifacts() -> None:
    Path(ARTIFACTS).mkdir(parents=True, exist_ok=True)
