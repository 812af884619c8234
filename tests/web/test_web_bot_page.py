"""A bot's page: its rating plot agrees with its table and says which line is which, a bot
with one game gets an honest plot, and a regression's sentence stays inside its table (in a
real Chromium)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from test_web_browser import ARTIFACTS, chromium
from webdata import site_copy, store_game, web_front

from referee.live.hub import LiveHub
from referee.storage import Repository, SourceKind
from referee.web.app import create_app
from referee.web.context import Fresh, WebSettings
from referee.web.plots import KEY


def _plots(page: str) -> list[str]:
    return re.findall(r'<svg [^>]*data-plot="versions".*?</svg>', page, re.S)


def test_the_rating_plot_draws_the_tables_rating_and_says_which_line_is_which(
    client: TestClient, ids: dict[str, Any]
) -> None:
    """For each version the plot draws the table's maximum-likelihood Elo as a dashed line at
    that value (inside the plot), names both figures in its legend, and keys the two kinds of
    line; the page says why they differ."""
    alpha = ids["bots"]["alpha"]
    page = client.get(f"/bots/{alpha}").text
    rows = client.get(f"/api/bots/{alpha}").json()["games"]["tetress"]["rows"]
    (plot, *_) = _plots(page)
    assert KEY in plot and "the table's maximum-likelihood Elo" in page
    height = float(re.search(r'height="(\d+)"', plot).group(1))  # type: ignore[union-attr]
    for row in rows:
        elo = f"{row['elo']:.0f}"
        line = re.search(rf'<line class="ml" data-elo="{elo}"[^>]*y1="([\d.]+)"', plot)
        assert line is not None, f"no dashed line at {row['version']}'s rating {elo}"
        assert 0 < float(line.group(1)) < height
        legend = rf"{row['version']}: \d+ after its last game .*? · {elo} in the table"
        assert re.search(legend, plot)


def test_a_one_game_bot_gets_a_dot_and_its_rating_not_an_empty_plot(
    repo: Repository, ids: dict[str, Any], client: TestClient
) -> None:
    """After its only game a bot's plot shows that game's rating as a dot and its table rating
    dashed, and its legend says it is one game."""
    solo = repo.add_bot_version(
        "solo", "v1", source_kind=SourceKind.REMOTE, location="-", owner="bob"
    )
    store_game(repo, solo, repo.get_bot_version(ids["versions"][0]), seed=3)
    (plot,) = _plots(client.get(f"/bots/{solo.bot_id}").text)
    assert plot.count('<circle class="dot"') == 1
    assert plot.count('<line class="ml"') == 1
    assert "v1: " in plot and "after its only game" in plot and "no rated games" not in plot


def test_a_bot_pages_data_is_reused_for_a_moment(
    repo: Repository, hub: LiveHub, ids: dict[str, Any]
) -> None:
    """Within ``page_data_s`` every reader of a bot page gets the data computed for the first
    (a game stored meanwhile is not on it yet); past it, the page is computed anew."""
    now = [100.0]
    settings = WebSettings(
        secret=b"test-secret-0123456789abcdef",
        refresh_s=0.0,
        analysis="off",
        page_data_s=2.0,
        page_stale_s=0.0,
    )
    app = create_app(repo, hub, settings)
    app.state.web.bot_pages.clock = lambda: now[0]
    app.state.web.pages.clock = lambda: now[0]  # the whole page is kept as long
    mine, other = (repo.get_bot_version(i) for i in ids["versions"][:2])
    path = f"/bots/{mine.bot_id}"
    with TestClient(app) as client:
        assert client.get(path).status_code == 200
        game_id = store_game(repo, mine, other, seed=7)
        now[0] += 1.9
        assert f'href="/games/{game_id}"' not in client.get(path).text
        now[0] += 0.2
        assert f'href="/games/{game_id}"' in client.get(path).text


def test_fresh_keeps_a_value_for_its_seconds_and_never_an_error() -> None:
    """A value is made once per key while fresh, made again once stale; a failed make keeps
    nothing."""
    now = [0.0]
    made: list[str] = []
    fresh: Fresh[str] = Fresh(2.0, clock=lambda: now[0])

    def make(key: str) -> str:
        made.append(key)
        return f"{key}{len(made)}"

    def fail() -> str:
        raise LookupError("no such bot")

    assert fresh.get("a", lambda: make("a")) == "a1"
    assert fresh.get("a", lambda: make("a")) == "a1"
    assert fresh.get("b", lambda: make("b")) == "b2"
    now[0] = 2.0
    assert fresh.get("a", lambda: make("a")) == "a3"
    with pytest.raises(LookupError):
        fresh.get("c", fail)
    assert fresh.get("c", lambda: make("c")) == "c4"


@pytest.fixture(scope="module")
def regressed(site_template: tuple[Path, dict[str, Any]], tmp_path_factory: Any) -> Iterator[Any]:
    """``referee web`` over the populated database plus a bot whose second version is three
    times slower and twice as big as its first (a flagged regression)."""
    db = site_copy(site_template, tmp_path_factory.mktemp("regressed"))
    repo = Repository.open(str(db))
    first = repo.add_bot_version(
        "slowpoke", "v1", source_kind=SourceKind.REMOTE, location="-", owner="bob"
    )
    second = repo.add_bot_version(
        "slowpoke", "v2", source_kind=SourceKind.REMOTE, location="-", owner="bob"
    )
    beta = repo.get_bot_version(site_template[1]["versions"][1])
    for seed in (21, 22, 23):
        store_game(repo, first, beta, seed, peak_mb=40.0)
        store_game(repo, second, beta, seed + 10, slower=3.0, peak_mb=80.0)
    repo.close()
    with web_front(db) as url:
        yield url, first.bot_id


@pytest.mark.slow
def test_a_regression_sentence_stays_inside_its_table(regressed: Any) -> None:
    """The profile table's regression sentence wraps inside its cell: never wider than the
    screen (a phone scrolls the table's other columns in its box), and on a laptop screen the
    whole table fits with the cell inside it."""
    base, bot = regressed
    with chromium() as browser:
        for width in (1280, 390):
            context = browser.new_context(viewport={"width": width, "height": 900})
            tab = context.new_page()
            tab.goto(f"{base}/bots/{bot}")
            table = tab.locator("#profiles-tetress")
            cell = table.locator("tr.regression td").last
            assert "slower than v1" in cell.inner_text()
            box, outer = cell.bounding_box(), table.bounding_box()
            assert outer["x"] + outer["width"] <= width
            # Wrapped, the sentence is never wider than the screen ...
            assert box["width"] <= width - 2 * outer["x"]
            if width > 1000:
                # ... and on a laptop the whole table fits: no sideways scroll.
                inner = table.evaluate("t => [t.scrollWidth, t.clientWidth]")
                assert inner[0] <= inner[1], f"at {width} px the table scrolls sideways"
                assert box["x"] + box["width"] <= outer["x"] + outer["width"] + 1
            tab.screenshot(path=str(ARTIFACTS / f"bot-regression-{width}.png"), full_page=True)
            context.close()
