"""One naming scheme: a bot is shown by its registered name in the CLI, on the web and in the
API (a client-registered ``alice/my_bot`` is not ``alice/alice/my_bot``, an upload
``alice-my_bot`` not ``alice/alice-my_bot``), and its short form resolves when unambiguous."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from engine.adjudication.verdicts import Verdict
from referee.commands.main import main
from referee.storage import FinishedGame, Repository, SeatResult, SourceKind


def _students_bots(repo: Repository, ids: dict[str, Any]) -> tuple[int, int]:
    """alice's remote bot as her client registers it, and her upload, each with a game."""
    remote = repo.add_bot_version(
        "alice/my_bot", "1", source_kind=SourceKind.REMOTE, location="my_bot", owner="alice"
    )
    upload = repo.add_bot_version(
        "alice-my_upload", "1", source_kind=SourceKind.REMOTE, location="x", owner="alice"
    )
    now = repo.get_game(ids["games"][0]).summary.finished_at
    for a, b in ((remote.id, ids["versions"][1]), (upload.id, ids["versions"][1])):
        repo.record_game(
            FinishedGame(
                game="tetress",
                seats=[SeatResult(a), SeatResult(b)],
                verdict=Verdict.NORMAL,
                winner_seat=0,
                plies=10,
                started_at=now,
                finished_at=now,
                reason="BLUE has no legal move; RED wins",
            )
        )
    return remote.bot_id, upload.bot_id


def test_web_and_api_show_the_registered_name(
    client: TestClient, repo: Repository, ids: dict[str, Any]
) -> None:
    """The leaderboard, the bot pages and the games list show ``alice/my_bot`` and
    ``alice-my_upload`` once each, never with the owner put in front again; the API's
    ``bot`` is the same name."""
    remote, upload = _students_bots(repo, ids)
    pages = [
        client.get("/leaderboard/tetress").text,
        client.get(f"/bots/{remote}").text,
        client.get(f"/bots/{upload}").text,
        client.get("/games?limit=500").text,
    ]
    for page in pages:
        assert "alice/alice" not in page
    assert "<h1>alice/my_bot</h1>" in pages[1] and "<h1>alice-my_upload</h1>" in pages[2]
    board = pages[0]
    assert re.search(r">alice/my_bot</a>", board) and re.search(r">alice-my_upload</a>", board)
    rows = client.get("/api/leaderboard/tetress").json()["rows"]
    assert {"alice/my_bot", "alice-my_upload"} <= {r["bot"] for r in rows}


def test_short_names_resolve_when_unambiguous(
    site: tuple[Path, dict[str, Any]], repo: Repository, capsys: pytest.CaptureFixture[str]
) -> None:
    """``bot show my_bot`` finds ``alice/my_bot``; ``my_upload`` finds ``alice-my_upload``;
    when bob has a ``my_bot`` too, the short name is refused naming both; the full name still
    works; ``games --bot my_upload`` lists that bot's game."""
    _students_bots(repo, site[1])
    db = str(site[0])
    assert main(["bot", "show", "my_bot", "--db", db]) == 0
    assert capsys.readouterr().out.startswith("alice/my_bot (owner alice)")
    assert main(["bot", "show", "my_upload", "--db", db]) == 0
    assert capsys.readouterr().out.startswith("alice-my_upload (owner alice)")
    assert main(["games", "--bot", "my_upload", "--db", db, "--json"]) == 0
    assert '"alice-my_upload@1"' in capsys.readouterr().out
    repo.add_bot_version(
        "bob/my_bot", "1", source_kind=SourceKind.REMOTE, location="my_bot", owner="bob"
    )
    assert main(["bot", "show", "my_bot", "--db", db]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "referee bot show: my_bot names several bots: alice/my_bot, bob/my_bot; give one of them"
    )
    assert main(["bot", "show", "bob/my_bot", "--db", db]) == 0
    assert main(["bot", "show", "nobody", "--db", db]) == 2
    assert "no bot 'nobody'" in capsys.readouterr().err
