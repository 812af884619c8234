"""Every id in a web address is bounded at the edge: a number past the database's range, a
negative one or a non-number is an unknown page (404), never a 500 with a traceback, and a
failure's log line is rendered off the event loop, its traceback bounded."""

from __future__ import annotations

import io
import re
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from starlette.convertors import IntegerConvertor
from starlette.routing import Route
from starlette.testclient import TestClient

from referee.live.hub import LiveHub
from referee.server import bounds
from referee.storage import Repository
from referee.telemetry import logs
from referee.web.app import IdConvertor, create_app, routes
from referee.web.context import WebSettings

BAD_IDS = ("9" * 30, str(2**63), str(2**64), "-1", "abc", "1e3", "\u0663", "0x10", "1.0")
_PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")


def _get_routes() -> list[Route]:
    return [r for r in routes() if isinstance(r, Route) and "GET" in (r.methods or ())]


def _filled(route: Route, bad: str, which: str) -> str:
    """The route's path with ``which`` set to ``bad`` and every other parameter a good one."""
    good = {"game": "tetress", "kind": "pgn", "name": "x"}
    return _PARAM.sub(lambda m: bad if m[1] == which else good.get(m[1], "1"), route.path)


def test_every_numeric_path_parameter_is_a_bounded_id() -> None:
    """No route matches digits with Starlette's unbounded int convertor: each numeric path
    parameter is the bounded id, so the rule has one home (bounds.ID_PATTERN)."""
    numeric = 0
    for route in routes():
        for name, convertor in getattr(route, "param_convertors", {}).items():
            assert type(convertor) is not IntegerConvertor, (route.path, name)
            numeric += isinstance(convertor, IdConvertor)
    assert numeric >= 15


def test_out_of_range_negative_and_non_numeric_ids_are_404_on_every_route(
    client: TestClient,
) -> None:
    """Each id of each page and API route, set to a number past 2^63, a negative or a
    non-number, is a 404 (JSON under /api/), never a 500 or a traceback."""
    checked = 0
    for route in _get_routes():
        for name, convertor in route.param_convertors.items():
            if not isinstance(convertor, IdConvertor):
                continue
            for bad in BAD_IDS:
                path = _filled(route, bad, name)
                response = client.get(path)
                assert response.status_code == 404, (path, response.status_code)
                assert "Traceback" not in response.text, path
                if path.startswith("/api/"):
                    assert response.json()["status"] == 404, path
                checked += 1
    assert checked >= 15 * len(BAD_IDS)


def test_huge_string_parameters_are_refused_without_a_crash(client: TestClient) -> None:
    """A 5,000-character name or uid in any route's text parameter is a 4xx, never a 500
    (the SDK's file, built by a process on first ask, is left to the SDK page's tests)."""
    for route in _get_routes():
        if route.path == "/sdk/{name}":
            continue
        for name, convertor in route.param_convertors.items():
            if isinstance(convertor, IdConvertor):
                continue
            path = _filled(route, "x" * 5000, name)
            status = client.get(path).status_code
            assert 400 <= status < 500, (path, status)


def test_the_largest_id_is_looked_up_and_one_past_it_is_unknown(client: TestClient) -> None:
    """2^63-1 reaches the database (no such game); 2^63 matches no route; the explorer's bot
    filter follows the same rule (400 naming it)."""
    assert client.get(f"/api/games/{bounds.MAX_ID}").json() == {
        "error": f"no game {bounds.MAX_ID}",
        "status": 404,
    }
    assert client.get(f"/api/games/{bounds.MAX_ID + 1}").json() == {
        "error": "Not Found",
        "status": 404,
    }
    assert client.get(f"/api/explorer/tetress?bot={bounds.MAX_ID}").status_code == 200
    response = client.get(f"/api/explorer/tetress?bot={bounds.MAX_ID + 1}")
    assert response.status_code == 400 and "bot" in response.json()["error"]


def test_a_flood_of_bad_ids_logs_nothing_and_answers_404(
    repo: Repository, hub: LiveHub, settings: WebSettings
) -> None:
    """200 requests for ids past 2^63 on the three reported routes are all 404 and write no
    log line at all (nothing is rendered, on the loop or off it)."""
    out = io.StringIO()
    logs.configure("console", "INFO", stream=out)
    try:
        with TestClient(create_app(repo, hub, settings)) as client:
            statuses = {
                client.get(f"{prefix}{2**63 + n}").status_code
                for n in range(200)
                for prefix in ("/games/", "/tournaments/", "/api/games/")
            }
    finally:
        logs.configure("console", "WARNING")
    assert statuses == {404}
    assert out.getvalue() == ""


class _Recorder(io.StringIO):
    """A log stream that notes the thread each write comes from."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[str] = set()

    def write(self, text: str) -> int:
        self.threads.add(threading.current_thread().name)
        return super().write(text)


@pytest.mark.parametrize("fmt", ["console", "json"])
def test_a_failing_page_is_logged_off_the_loop_with_a_bounded_traceback(
    tmp_path: Path, settings: WebSettings, fmt: str
) -> None:
    """A page that fails deep in a recursion (a broken database under a deep call) answers
    500; its log line, traceback included, is rendered by the log writer thread, never on the
    event loop's thread, and the traceback is cut to a bounded number of lines."""
    db = tmp_path / "broken.db"
    repo = Repository.open(str(db))
    with sqlite3.connect(db) as raw:
        raw.execute("DROP TABLE game_seats")
        raw.execute("DROP TABLE games")
    out = _Recorder()
    logs.configure(fmt, "INFO", stream=out)  # type: ignore[arg-type]
    try:
        with TestClient(
            create_app(repo, LiveHub(), settings), raise_server_exceptions=False
        ) as client:
            response = client.get("/api/games/1")
        logs.flush()
    finally:
        logs.configure("console", "WARNING")
    assert response.status_code == 500
    text = out.getvalue()
    assert "page_failed" in text and "no such table" in text
    assert out.threads == {"log-writer"}
    assert text.count("\n") <= logs_bound()


def logs_bound() -> int:
    """The most lines one failure's log line may take: the traceback's bound and a few more."""
    from referee.telemetry.logwriter import MAX_TRACEBACK_LINES

    return MAX_TRACEBACK_LINES + 5


def test_a_deep_traceback_is_cut_to_its_innermost_frames() -> None:
    """An exception 500 frames deep renders in at most the bound's lines in both formats,
    keeping the innermost frame and saying how much was left out."""

    def deep(n: int) -> Any:
        if n == 0:
            raise ValueError("the innermost failure")
        return deep(n - 1) + 0  # not a tail call: a frame per level, none repeated exactly

    for fmt in ("console", "json"):
        out = io.StringIO()
        logs.configure(fmt, "INFO", stream=out)  # type: ignore[arg-type]
        try:
            deep(500)
        except ValueError:
            logs.get_logger("t").exception("failed")
        logs.configure("console", "WARNING")
        text = out.getvalue()
        lines = text.replace("\\n", "\n").count("\n")
        assert "the innermost failure" in text, fmt
        assert lines <= logs_bound(), (fmt, lines)
        assert len(text) <= 2 * logs_bound() * 200, fmt
