"""The replay on a game page in a real Chromium: a step fetches only what changes from ply to
ply (clocks, board, controls, think record), never the move list or the chart again, and the
move list and the chart follow the shown ply."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from test_web_browser import ARTIFACTS, chromium

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tab(site_url: Any) -> Iterator[Any]:
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        yield context.new_page()
        context.close()


def _inside(inner: dict[str, float], outer: dict[str, float]) -> bool:
    return inner["y"] >= outer["y"] - 1 and (
        inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 1
    )


def test_a_step_fetches_one_small_fragment(site_url: Any, tab: Any) -> None:
    """Each step is one request for the ply's fragment, without the move list or the chart:
    a small part of the page, whatever the game's length."""
    base, ids = site_url
    game = ids["games"][0]
    page_bytes = len(tab.request.get(f"{base}/games/{game}").body())
    tab.goto(f"{base}/games/{game}?ply=0", wait_until="networkidle")
    asked: list[str] = []
    tab.on("request", lambda r: asked.append(r.url.removeprefix(base)))
    bodies = []
    for n in (1, 2, 3, 4):
        with tab.expect_response(f"{base}/games/{game}/ply/{n}") as answer:
            tab.keyboard.press("ArrowRight")
        tab.wait_for_selector(f"#replay[data-ply='{n}']")
        bodies.append(answer.value.body())
    # (The browser may ask for the favicon at any time: static files are not the replay's.)
    assert [url for url in asked if not url.startswith("/static/")] == [
        f"/games/{game}/ply/{n}" for n in (1, 2, 3, 4)
    ]
    for body in bodies:
        assert b'id="moves"' not in body and b"game-chart" not in body
        assert len(body) < page_bytes / 3, (len(body), page_bytes)


def test_the_move_list_and_the_chart_follow_the_shown_ply(site_url: Any, tab: Any) -> None:
    """After End (the last ply, far down a long move list) the list has scrolled to that
    ply's row, marked alone as current, and the chart's marker stands on its column; a step
    back moves both."""
    base, ids = site_url
    game = ids["games"][0]
    tab.goto(f"{base}/games/{game}?ply=0")
    plies = int(tab.get_attribute("#replay", "data-plies"))
    box = tab.locator(".moves-side").bounding_box()
    for key, ply in (("End", plies), ("ArrowLeft", plies - 1)):
        tab.keyboard.press(key)
        tab.wait_for_selector(f"#moves tr.current[data-ply='{ply}']")
        assert tab.locator("#moves tr.current").count() == 1
        row = tab.locator("#moves tr.current").bounding_box()
        assert _inside(row, box), f"ply {ply}'s row is out of the list's view"
        column = tab.locator(f"svg.game-chart a.ply-link[data-ply='{ply}'] rect").bounding_box()
        marker = tab.locator("svg.game-chart line.now").bounding_box()
        centre = column["x"] + column["width"] / 2
        assert abs(marker["x"] + marker["width"] / 2 - centre) < 1.5
    tab.screenshot(path=str(ARTIFACTS / "replay-follows.png"), full_page=True)


def _asking(page: Any) -> bool:
    """Whether a step's request is in flight (htmx marks its element while it waits)."""
    return bool(page.evaluate("document.querySelector('.htmx-request') !== null"))


def test_the_player_keeps_its_pace_counting_from_each_request(site_url: Any, tab: Any) -> None:
    """At 4x a step is asked for 250 ms (of the page's own clock, driven by the test) after the
    previous one was asked for: an answer that took 200 ms leaves 50 ms to the next step, so a
    quick server keeps the chosen pace and a slow one only delays it."""
    base, ids = site_url
    page = tab.context.new_page()
    held: list[Any] = []
    try:
        page.clock.install()
        page.goto(f"{base}/games/{ids['games'][0]}?ply=0", wait_until="networkidle")
        page.clock.pause_at(page.evaluate("Date.now()") + 1000)
        page.route(
            "**/ply/*", lambda route: held.append(route)
        )  # each step's answer waits for the test
        page.select_option("#speed", "4")
        page.click("#play")
        page.clock.run_for(249)
        assert not _asking(page) and not held
        with page.expect_request("**/ply/1"):
            page.clock.run_for(1)
        assert _asking(page)
        page.clock.run_for(200)  # the server takes 200 ms to answer
        while not held:  # a poll: the route's handler runs on Playwright's side
            page.wait_for_timeout(20)
        held.pop().continue_()
        page.wait_for_selector("#replay[data-ply='1']")
        page.clock.run_for(49)
        assert not _asking(page) and not held, "the next step came early"
        with page.expect_request("**/ply/2"):
            page.clock.run_for(1)
        assert page.get_attribute("#replay", "data-ply") == "1"
    finally:
        for route in held:
            route.abort()
        page.close()
