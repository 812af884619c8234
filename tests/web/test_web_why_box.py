"""The "why" box of a game a bot lost by a fault: a remote bot's crash shows the traceback the
referee holds, and the box opens with the failure pack and the SDK's reproduce command (what a
laptop with only the SDK can run), not a ``referee`` command."""

from __future__ import annotations

import json
from typing import Any

from starlette.testclient import TestClient
from webdata import alphas_game, sign_in

from engine.adjudication.verdicts import Verdict
from referee.storage import Repository, SeatResult, SourceKind

TRACEBACK = 'Traceback (most recent call last):\n  File "bot.py", line 9\nValueError: broke'


def _remote_crash(repo: Repository, ids: dict[str, Any]) -> tuple[int, str]:
    """alpha (alice's, seat 0) crashed remotely: no output kept, its traceback in its pack."""
    pack = {
        "format": "tetromino-failure-pack",
        "version": 2,
        "messages": [{"t": 0.5, "event": "bot_error", "detail": TRACEBACK}],
    }
    stored = alphas_game(
        repo,
        ids,
        {"stderr": "", "failure_pack": json.dumps(pack)},
        verdict=Verdict.RUNTIME_ERROR,
        winner_seat=1,
        offender_seat=0,
        reason="RED's bot raised an exception: ValueError: broke",
    )
    return stored.id, stored.uid


def test_a_remote_crash_shows_the_traceback_the_referee_holds(
    client: TestClient, repo: Repository, ids: dict[str, Any]
) -> None:
    """The owner reads the crashed remote bot's traceback in the box, not "(nothing on
    standard error)"."""
    game, _ = _remote_crash(repo, ids)
    sign_in(client, ids["token"])
    page = client.get(f"/games/{game}").text
    box = page[page.index('id="why"') : page.index('class="replay-wrap"')]
    assert "ValueError: broke" in box
    assert "(nothing on standard error)" not in page


def test_the_box_opens_with_the_pack_and_the_sdks_reproduce_command(
    client: TestClient, repo: Repository, ids: dict[str, Any]
) -> None:
    """At the top of the box: the pack's link and ``python -m client_sdk reproduce`` (from the
    file, and by the game's id with --server); no ``referee replay`` hint anywhere."""
    game, uid = _remote_crash(repo, ids)
    sign_in(client, ids["token"])
    page = client.get(f"/games/{game}").text
    why, replay = page.index('id="why"'), page.index('class="replay-wrap"')
    packs = page.index('id="failure-packs"')
    assert why < packs < page.index('class="why-points"') < replay
    assert f'href="/games/{game}/pack/0"' in page[packs:replay]
    file_name = f"game-{game}.red.failure.json"
    assert f"python -m client_sdk reproduce {file_name} YOUR_BOT" in page
    assert f"python -m client_sdk reproduce {uid} YOUR_BOT --server testserver" in page
    assert "referee replay" not in page
    client.cookies.clear()
    public = client.get(f"/games/{game}").text
    assert "failure-packs" not in public and "referee replay" not in public


def test_a_command_bots_pack_is_replayed_against_its_command(
    client: TestClient, repo: Repository, ids: dict[str, Any]
) -> None:
    """A C++ or JavaScript version's pack (a command bot) offers ``reproduce PACK --
    COMMAND``, the SDK's form for a bot in any language, not the Python form."""
    cee = repo.add_bot_version(
        "cee", "v1", source_kind=SourceKind.COMMAND, location="/store/builds/x/bot", owner="alice"
    )
    other = next(v for v in repo.list_bot_versions() if v.bot_name == "beta")
    pack = {"format": "tetromino-failure-pack", "version": 2, "messages": []}
    seat = SeatResult(cee.id, stderr="", failure_pack=json.dumps(pack))
    stored = alphas_game(
        repo,
        ids,
        {},
        seats=[seat, SeatResult(other.id)],
        verdict=Verdict.RUNTIME_ERROR,
        winner_seat=1,
        offender_seat=0,
        reason="RED's bot crashed (killed by signal SIGSEGV)",
    )
    sign_in(client, ids["token"])
    page = client.get(f"/games/{stored.id}").text
    file_name = f"game-{stored.id}.red.failure.json"
    assert f"python -m client_sdk reproduce {file_name} -- YOUR_BOT_COMMAND" in page
    fetch = f"{stored.uid} --server testserver --token-file token.txt -- YOUR_BOT_COMMAND"
    assert f"python -m client_sdk reproduce {fetch}" in page
    assert "YOUR_BOT " not in page
