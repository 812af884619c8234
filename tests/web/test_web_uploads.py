"""Uploading a bot from the browser's form, through the real submission service."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from webdata import bot_zip, sign_in

from referee.live.hub import LiveHub
from referee.match.clock import TimeControl
from referee.storage import Repository
from referee.submissions.limits import UploadLimits
from referee.submissions.service import Submissions
from referee.submissions.store import SubmissionStore
from referee.submissions.validate import ValidationSettings
from referee.web.app import create_app
from referee.web.context import WebSettings

#: A short validation game keeps the test quick; the limits are the normal ones.
VALIDATION = ValidationSettings(
    game="tetress", game_params={"turn_limit": 16}, time_control=TimeControl(game_time_s=60)
)


@pytest.fixture
def uploads_client(repo: Repository, tmp_path: Path) -> Iterator[TestClient]:
    limits = UploadLimits(max_archive_bytes=256 * 1024)
    submissions = Submissions(
        repo, SubmissionStore(tmp_path / "store"), limits=limits, validation=VALIDATION
    )
    settings = WebSettings(secret=b"upload-test-secret-0123456789")
    app = create_app(repo, LiveHub(), settings, submissions=submissions)
    with TestClient(app, follow_redirects=False) as client:
        yield client


def _upload(client: TestClient, data: bytes, name: str = "") -> Any:
    csrf = client.cookies.get("arena_csrf")
    return client.post(
        "/me/upload",
        data={"csrf_token": csrf, "name": name},
        files={"archive": ("bot.zip", data, "application/zip")},
    )


def test_a_hostile_or_empty_upload_is_refused_with_its_reason(
    uploads_client: TestClient, ids: dict[str, Any]
) -> None:
    """Not an archive, an empty file, or a bad bot name: 422 with the service's sentence, and
    nothing is stored."""
    sign_in(uploads_client, ids["token"])
    page = _upload(uploads_client, b"this is not a zip file")
    assert page.status_code == 422
    assert 'id="upload-error"' in page.text
    assert _upload(uploads_client, b"").status_code == 422
    bad_name = _upload(uploads_client, bot_zip(), name="<b>x</b>")
    assert bad_name.status_code == 422 and "&lt;b&gt;" in bad_name.text
    assert "no uploads yet" in uploads_client.get("/me").text


def test_an_upload_over_the_service_limit_is_refused_before_reading(
    uploads_client: TestClient, ids: dict[str, Any]
) -> None:
    """The body limit follows the service's archive limit (256 KiB here, plus the form)."""
    sign_in(uploads_client, ids["token"])
    assert _upload(uploads_client, b"x" * (400 * 1024)).status_code == 413


@pytest.mark.slow
def test_an_upload_is_validated_and_shown_to_its_owner(
    uploads_client: TestClient, ids: dict[str, Any]
) -> None:
    """A course bot uploaded through the form is stored, validated by a real game in the
    sandbox, and the student's page shows it accepted with the bot's output."""
    sign_in(uploads_client, ids["token"])
    response = _upload(uploads_client, bot_zip(), name="alice-greedy")
    assert response.status_code == 303 and response.headers["location"] == "/me"
    deadline = time.monotonic() + 180
    fragment = ""
    while time.monotonic() < deadline:
        fragment = uploads_client.get("/me/submissions").text
        if "validating" not in fragment:
            break
        time.sleep(0.5)
    assert "alice-greedy" in fragment
    assert '<b class="status">accepted</b>' in fragment, fragment
    mine = uploads_client.get("/api/me").json()["versions"]
    assert "alice-greedy" in {v["bot"] for v in mine}


@pytest.mark.slow
def test_a_rejected_upload_links_its_validation_game_and_failure_pack(
    uploads_client: TestClient, ids: dict[str, Any], tmp_path: Path
) -> None:
    """A course bot that raises at its third move is rejected; /me links the validation game
    (readable by its uploader) and the bot's failure pack, which downloads."""
    import json
    import shutil

    folder = tmp_path / "agent"
    shutil.copytree(
        Path(__file__).resolve().parents[2] / "client_sdk/examples/course_greedy", folder
    )
    program = folder / "program.py"
    program.write_text(
        program.read_text().replace(
            "    def action(self, **referee: Any) -> PlaceAction:\n",
            "    def action(self, **referee: Any) -> PlaceAction:\n"
            "        self.calls = getattr(self, 'calls', 0) + 1\n"
            "        if self.calls == 3:\n"
            "            raise ValueError('broken on the third move')\n",
        )
    )
    sign_in(uploads_client, ids["token"])
    assert _upload(uploads_client, bot_zip(folder), name="alice-broken").status_code == 303
    deadline = time.monotonic() + 180
    fragment = ""
    while time.monotonic() < deadline and "validating" in (
        fragment := uploads_client.get("/me/submissions").text
    ):
        time.sleep(0.5)
    assert '<b class="status">rejected</b>' in fragment, fragment
    page = uploads_client.get("/me").text
    game = re.search(r'href="(/games/\d+)">validation game</a>', page)
    pack = re.search(r'href="(/games/\d+/pack/\d)" download>failure pack</a>', page)
    assert game is not None and pack is not None, page
    assert pack.group(1).startswith(game.group(1) + "/")
    assert uploads_client.get(game.group(1)).status_code == 200
    served = uploads_client.get(pack.group(1))
    assert served.status_code == 200 and json.loads(served.text)["verdict"] == "runtime_error"


def test_the_upload_table_shows_the_queue_place_and_estimate_as_data(
    uploads_client: TestClient, ids: dict[str, Any]
) -> None:
    """A validating version waiting in the fair queue shows its place and wait estimate, in
    the text and as data attributes; one whose full games run says so."""
    import asyncio
    import types

    from referee.submissions.validation_queue import Position

    sign_in(uploads_client, ids["token"])
    app: Any = uploads_client.app
    submissions = app.state.submissions
    waiting = asyncio.run(submissions.receive("alice", bot_zip(), "alice-waits"))
    running = asyncio.run(submissions.receive("alice", bot_zip() + b"", "alice-runs"))
    positions = {waiting.id: Position("waiting", 3, 42.4), running.id: Position("running")}
    submissions.queue = types.SimpleNamespace(snapshot=lambda: positions)
    fragment = uploads_client.get("/me/submissions").text
    assert 'data-queue-place="3"' in fragment and 'data-wait-estimate-s="42.4"' in fragment
    shown = 'place <b class="place">3</b> in the queue, about <span class="wait">42</span> s'
    assert shown in fragment
    assert 'data-queue-state="running"' in fragment and "running now" in fragment
