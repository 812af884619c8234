"""Instructors read on the web what gRPC lets them read (one rule,
:mod:`referee.storage.readers`): every seat's failure pack and every validation game."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient
from webdata import alphas_game, sign_in

from referee.rpc.callers import Caller, may_read_game
from referee.storage import Repository
from referee.storage.enums import GameKind, Role


def _validation_game(repo: Repository, ids: dict[str, Any]) -> int:
    """A validation game of alpha's (alice's) against another player's bot."""
    return alphas_game(repo, ids, {"stderr": "alpha checked"}, kind=GameKind.VALIDATION).id


def _token(repo: Repository, name: str, role: Role) -> str:
    repo.create_player(name)
    return repo.issue_token(name, role=role)


def test_an_instructor_gets_every_seats_failure_pack_on_the_web(
    client: TestClient, repo: Repository, ids: dict[str, Any]
) -> None:
    """Signed in with an instructor's token, both seats' packs are linked and served; a
    student who played neither seat gets no link and a 404."""
    game = ids["games"][0]
    sign_in(client, _token(repo, "prof", Role.INSTRUCTOR))
    page = client.get(f"/games/{game}").text
    for seat, bot in ((0, "alpha"), (1, "beta")):
        assert f'href="/games/{game}/pack/{seat}"' in page
        served = client.get(f"/games/{game}/pack/{seat}")
        assert served.status_code == 200 and f"{bot}'s pack 0" in served.text
    client.cookies.clear()
    sign_in(client, _token(repo, "carol", Role.STUDENT))
    assert "/pack/" not in client.get(f"/games/{game}").text
    assert client.get(f"/games/{game}/pack/0").status_code == 404


def test_an_instructor_reads_validation_games_on_the_web_as_over_grpc(
    client: TestClient, repo: Repository, ids: dict[str, Any]
) -> None:
    """A validation game's page, record and API view are the instructor's to read, as the
    gRPC read services' rule says; another student still gets 404."""
    check = _validation_game(repo, ids)
    paths = (f"/games/{check}", f"/games/{check}/record.pgn", f"/api/games/{check}")
    sign_in(client, _token(repo, "prof", Role.INSTRUCTOR))
    for path in paths:
        assert client.get(path).status_code == 200, path
    assert "alpha checked" in client.get(f"/games/{check}").text
    prof = Caller(repo.get_player("prof"), Role.INSTRUCTOR)
    assert may_read_game(repo, prof, repo.get_game(check).summary)
    client.cookies.clear()
    sign_in(client, _token(repo, "carol", Role.STUDENT))
    for path in paths:
        assert client.get(path).status_code == 404, path
    carol = Caller(repo.get_player("carol"), Role.STUDENT)
    assert not may_read_game(repo, carol, repo.get_game(check).summary)
