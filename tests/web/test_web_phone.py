"""The web pages at phone width (390 px) in a real Chromium: the page never scrolls sideways,
the navigation wraps inside the screen, and a table wider than the screen scrolls inside its
own box. Screenshots go to ``test-artifacts/web/phone-*.png``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from test_web_browser import ARTIFACTS, chromium

pytestmark = pytest.mark.slow

PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def phone(site_url: Any) -> Iterator[Any]:
    with chromium() as browser:
        # The pages' CSP forbids eval; measuring layout from the test needs it.
        context = browser.new_context(viewport=PHONE, is_mobile=True, bypass_csp=True)
        yield context.new_page()
        context.close()


def _page_width(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth"))


def test_pages_fit_a_phone(site_url: Any, phone: Any) -> None:
    """Leaderboard, games, a game, a bot and the tournaments at 390 px: nothing makes the
    page wider than the screen, and every navigation link is inside it."""
    base, ids = site_url
    for name, path in (
        ("leaderboard", "/leaderboard/tetress"),
        ("games", "/games"),
        ("game", f"/games/{ids['games'][0]}"),
        ("bot", "/bots/1"),
        ("tournaments", "/tournaments"),
        ("sdk", "/sdk"),
    ):
        phone.goto(base + path)
        phone.screenshot(path=str(ARTIFACTS / f"phone-{name}.png"), full_page=True)
        assert _page_width(phone) <= PHONE["width"], f"{path} scrolls sideways"
        for link in phone.locator("header.top a").all():
            box = link.bounding_box()
            assert box is not None and box["x"] >= 0
            assert box["x"] + box["width"] <= PHONE["width"], f"{path}: a link runs off"


def test_wide_table_scrolls_inside_its_box(site_url: Any, phone: Any) -> None:
    """The leaderboard table is wider than the phone: it keeps every column, stays inside
    the screen, and scrolls sideways within its own box."""
    base, _ = site_url
    phone.goto(base + "/leaderboard/tetress")
    table = phone.locator("#board").first
    box = table.bounding_box()
    assert box is not None and box["x"] + box["width"] <= PHONE["width"]
    inner = table.evaluate("t => [t.scrollWidth, t.clientWidth]")
    assert inner[0] > inner[1], "the table fits without scrolling: nothing to test"
    table.evaluate("t => { t.scrollLeft = t.scrollWidth; }")
    last = phone.locator("#board thead th").last.bounding_box()
    assert last is not None and last["x"] + last["width"] <= PHONE["width"] + 1
    phone.screenshot(path=str(ARTIFACTS / "phone-leaderboard-scrolled.png"), full_page=True)


#: Per page, a table and the columns a reader comes for: they must be on the screen without
#: scrolling the table sideways (names wrap instead).
KEY_COLUMNS = (
    ("/leaderboard/tetress", "#board", ("Elo",)),
    ("/games", "table.games", ("result",)),
    ("/games/{game}", "#moves", ("time", "clock")),
    ("/bots/{alpha}", "table.data >> nth=1", ("Elo",)),
    ("/tournaments/{tournament}", "#standings", ("Elo",)),
)


def test_key_columns_are_on_a_phone_screen(site_url: Any, phone: Any) -> None:
    """At 390 px the rating, result, move time and clock columns are inside the screen
    when a page opens, not behind its table's own sideways scroll."""
    base, ids = site_url
    values = {"game": ids["games"][0], "alpha": ids["bots"]["alpha"]}
    values["tournament"] = ids["tournament"]
    for path, table, keys in KEY_COLUMNS:
        phone.goto(base + path.format(**values))
        for key in keys:
            head = phone.locator(table).first.locator("thead th", has_text=key).first
            box = head.bounding_box()
            assert box is not None, f"{path}: no {key} column"
            assert box["x"] + box["width"] <= PHONE["width"], f"{path}: {key} is off the screen"


def test_game_chart_fits_a_phone(site_url: Any, phone: Any) -> None:
    """The game chart scales to the phone's width: all of it on the screen, no inner scroll."""
    base, ids = site_url
    phone.goto(f"{base}/games/{ids['games'][0]}")
    chart = phone.locator("svg.game-chart")
    box = chart.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    # Drawn in 680 units, shown at most the screen's width: scaled down, not cropped.
    assert box["width"] < 680
    inner = phone.locator("figure.chart").evaluate("f => [f.scrollWidth, f.clientWidth]")
    assert inner[0] <= inner[1]
