"""The web front in a real Chromium (Debian's package, driven by Playwright for Python).

One ``referee serve --db ... --web ...`` process serves a populated database while two real
bot processes play casual games on it. The tests load the leaderboard and sort it, step through
a replay with the keyboard, follow a live game until it ends, and sign in; each saves a
screenshot under ``test-artifacts/web/``. Any console error (a CSP violation is one) fails the
test. Without Playwright or Chromium they skip, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from webdata import bot_zip

from referee.storage import Repository

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "web"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
SLOW_BOT = Path(__file__).parent / "bots" / "slow_bot.py"


def _missing(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: the browser tests must run)")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_http(url: str, proc: subprocess.Popen[bytes], deadline: float) -> None:
    """Until ``url`` answers 200; fails at once if the server has exited (e.g. its port was
    taken between ``_free_port`` and its bind)."""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with status {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"{url} did not answer")


@pytest.fixture(scope="module")
def arena(site_template: tuple[Path, dict[str, Any]], tmp_path_factory: Any) -> Iterator[Any]:
    """A real referee with its web front, and two bots playing casual games on it."""
    work = tmp_path_factory.mktemp("browser")
    db = work / "site.db"
    shutil.copy(site_template[0], db)
    # The token key beside the database goes with it (tokens are hashed under it).
    shutil.copy(site_template[0].with_name("site.db.token-key"), work / "site.db.token-key")
    ids = dict(site_template[1])
    repo = Repository.open(str(db))
    bob_token = repo.issue_token("bob", label="browser test")
    repo.close()
    port = _free_port()
    env = {**os.environ, "SLOW_BOT_DELAY": "0.12"}
    command = [sys.executable, "-m", "referee.commands.main", "serve", "--db", str(db)]
    command += ["--listen", "127.0.0.1:0", "--address-file", str(work / "addr")]
    command += ["--web", f"127.0.0.1:{port}", "--game", "tetress", "--log-level", "WARNING"]
    command += ["--submissions", str(work / "store")]
    procs = [subprocess.Popen(command, env=env, cwd=work)]
    try:
        # Generous: on a loaded two-core machine the server's start-up alone can take 30 s.
        deadline = time.monotonic() + 120
        _wait_http(f"http://127.0.0.1:{port}/healthz", procs[0], deadline)
        address = (work / "addr").read_text().split()[0]
        for token, bot in ((ids["token"], str(SLOW_BOT)), (bob_token, str(SLOW_BOT))):
            client = [sys.executable, "-m", "client_sdk", "--server", address, "--token", token]
            procs.append(subprocess.Popen([*client, bot], env=env, cwd=work))
        yield f"http://127.0.0.1:{port}", ids
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in reversed(procs):
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright (skipped without them, failed under CI=true);
    the screenshots' folder made."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright for Python is not installed (pip install playwright)")
    if not Path(CHROMIUM).exists():
        _missing(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.errors = errors
    yield tab
    context.close()
    assert errors == [], errors


def test_leaderboard_loads_and_sorts(arena: Any, page: Any) -> None:
    """The Tetress leaderboard shows its bots; clicking "games" re-sorts the table in place
    (htmx) and the address follows."""
    base, _ = arena
    page.goto(f"{base}/leaderboard/tetress")
    assert page.locator("#board tbody tr").count() >= 3
    assert "alpha" in page.inner_text("#board")
    assert page.locator("#ladder").is_visible()
    page.click("#board th a[data-sort=games]")
    page.wait_for_selector("#board[data-sort=games]")
    assert "sort=games" in page.url
    games = [int(t) for t in page.locator("#board tbody tr td:nth-child(4)").all_inner_texts()]
    assert games == sorted(games, reverse=True)
    page.screenshot(path=str(ARTIFACTS / "leaderboard.png"), full_page=True)


def test_replay_steps_with_the_keyboard(arena: Any, page: Any) -> None:
    """Home goes to the start, the right arrow steps forward a move at a time (the board
    gains pieces), the left arrow steps back."""
    base, ids = arena
    page.goto(f"{base}/games/{ids['games'][0]}")
    plies = int(page.get_attribute("#replay", "data-plies"))
    assert page.get_attribute("#replay", "data-ply") == str(plies)
    page.keyboard.press("Home")
    page.wait_for_selector("#replay[data-ply='0']")
    assert page.locator("#replay svg .piece").count() == 0
    for n in (1, 2, 3):
        page.keyboard.press("ArrowRight")
        page.wait_for_selector(f"#replay[data-ply='{n}']")
    pieces = page.locator("#replay svg .piece").count()
    assert pieces > 0
    assert "ply=3" in page.url
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector("#replay[data-ply='2']")
    assert page.locator("#replay svg .piece").count() < pieces
    assert page.locator("#moves tr.current").count() == 1
    page.screenshot(path=str(ARTIFACTS / "replay.png"), full_page=True)


def _fresh_live_game(page: Any, base: str) -> str:
    """The uid of a live game that has just begun (so it cannot end before the page opens)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        fresh = [g for g in page.request.get(f"{base}/api/live").json() if g["plies"] < 8]
        if fresh:
            return str(fresh[0]["uid"])
        page.wait_for_timeout(100)
    raise TimeoutError("no live game began within a minute")


def _seconds(clock: str) -> float:
    """A clock's text (``m:ss.t``) in seconds."""
    minutes, _, rest = clock.partition(":")
    return 60 * int(minutes) + float(rest)


def _mover_turn(page: Any) -> tuple[str, str, str] | None:
    """The mover's clock id, the time it shows and the ply shown, read in one step (the page
    updates all three in one event handler), or None when no seat is marked to move."""
    found = page.locator(".clock.to-move").evaluate_all(
        "els => els.map(e => [e.id, e.querySelector('.time').textContent,"
        " document.getElementById('live-ply').textContent])"
    )
    return (str(found[0][0]), str(found[0][1]), str(found[0][2])) if len(found) == 1 else None


def _counts_down(page: Any, within_s: float = 30.0) -> bool:
    """Whether the mover's clock shows a different time within one turn, and less of it:
    waited for (until ``within_s``), not sampled after a fixed pause. One turn is the same
    seat to move at the same ply: on a loaded machine several moves' events can arrive
    between two looks, and the same seat's next turn starts again from the referee's figure."""
    deadline = time.monotonic() + within_s
    turn: tuple[str, str, str] | None = None
    while time.monotonic() < deadline:
        now = _mover_turn(page)
        if now is not None:
            if turn is None or (now[0], now[2]) != (turn[0], turn[2]):
                turn = now  # a new turn: watch its clock from here
            elif now[1] != turn[1]:
                return _seconds(now[1]) < _seconds(turn[1])
        page.wait_for_timeout(50)
    return False


def test_live_game_is_followed_until_it_ends(arena: Any, page: Any) -> None:
    """From the live list into a game being played: moves arrive over SSE, the mover's clock
    counts down, and the page shows the verdict when the game ends."""
    base, _ = arena
    page.goto(f"{base}/live")
    page.locator("#live-games a").first.wait_for(timeout=30_000)
    uid = _fresh_live_game(page, base)
    page.goto(f"{base}/live")
    page.screenshot(path=str(ARTIFACTS / "live-list.png"), full_page=True)
    page.click(f"#live-games a[href='/live/{uid}']")
    page.wait_for_selector("#live-board svg", timeout=15_000)
    players = page.inner_text("p.players")
    assert "alice/slow_bot" in players and "bob/slow_bot" in players
    start = page.locator("#moves tbody tr").count()
    # (No wait_for_function: evaluating a string is eval, which the pages' CSP forbids.)
    page.locator("#moves tbody tr").nth(start + 1).wait_for(timeout=15_000)
    assert _counts_down(page)
    # Waited for, not counted at once: the board is swapped for a new one with every move.
    page.locator("#live-board svg .piece").first.wait_for(timeout=10_000)
    page.locator("#live-board svg rect.last").first.wait_for(timeout=10_000)
    page.screenshot(path=str(ARTIFACTS / "live-game-running.png"), full_page=True)
    page.wait_for_selector("#verdict.ended", timeout=90_000)
    assert any(w in page.inner_text("#verdict") for w in ("wins", "Draw"))
    assert page.locator("#moves tbody tr").count() > start + 1
    page.screenshot(path=str(ARTIFACTS / "live-game-ended.png"), full_page=True)


def test_student_signs_in_and_uploads_a_bot(arena: Any, page: Any) -> None:
    """A wrong token is refused on the page; the right one leads to the student's page with
    their bots and games (and their own bot's output on a game page, the token nowhere);
    a bot uploaded through the form is validated and shown accepted."""
    base, ids = arena
    page.goto(f"{base}/signin")
    page.fill("#token", "arena_nope")
    page.click("#signin-form button")
    assert "not valid" in page.inner_text("#signin-error")
    # The refused sign-in page comes with status 401, which Chromium logs as a console error.
    assert page.errors == [
        "Failed to load resource: the server responded with a status of 401 (Unauthorized)"
    ]
    page.errors.clear()
    page.fill("#token", ids["token"])
    page.click("#signin-form button")
    page.wait_for_url(f"{base}/me")
    assert page.inner_text("#me-link") == "alice"
    assert "alpha" in page.inner_text("#my-versions")
    assert ids["token"] not in page.content()
    page.screenshot(path=str(ARTIFACTS / "me.png"), full_page=True)
    page.goto(f"{base}/games/{ids['games'][0]}")
    assert "secret debug line" in page.inner_text("pre.output")
    page.screenshot(path=str(ARTIFACTS / "own-output.png"), full_page=True)
    # Upload a course bot through the form; the page follows its validation to "accepted".
    page.goto(f"{base}/me")
    archive = {"name": "agent.zip", "mimeType": "application/zip", "buffer": bot_zip()}
    page.set_input_files("#archive", files=[archive])
    page.fill("#bot-name", "alice-web")
    page.click("#upload-button")
    page.wait_for_url(f"{base}/me")
    row = page.locator("#submission-list tr", has_text="alice-web")
    row.wait_for(timeout=10_000)
    page.screenshot(path=str(ARTIFACTS / "upload-validating.png"), full_page=True)
    row.locator("b.status", has_text="accepted").wait_for(timeout=180_000)
    page.screenshot(path=str(ARTIFACTS / "upload-accepted.png"), full_page=True)
