"""The lessons pages: a bot's lessons by version with boards and better moves for its owner
and the instructor only, and the class's kinds of mistake for the instructor."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from lessondata import SECRETS, store_game
from starlette.testclient import TestClient
from webdata import sign_in

from referee.analysis.lessonbook import LessonBook
from referee.live.hub import LiveHub
from referee.storage import Repository, SourceKind
from referee.storage.enums import Role
from referee.storage.lessonruns import PositionRun, save_runs
from referee.web.app import create_app
from referee.web.context import WebSettings


@dataclass
class Site:
    repo: Repository
    tokens: dict[str, str]
    ant: int
    versions: dict[str, int]


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    """alice's ant (v1: two analysed games, v2: one) against bob's bee; carol teaches."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    for name in ("alice", "bob", "carol"):
        repo.create_player(name)
    tokens = {
        "alice": repo.issue_token("alice"),
        "bob": repo.issue_token("bob"),
        "carol": repo.issue_token("carol", role=Role.INSTRUCTOR),
    }
    kind = SourceKind.REMOTE
    v1 = repo.add_bot_version("ant", "v1", source_kind=kind, location="", owner="alice")
    v2 = repo.add_bot_version("ant", "v2", source_kind=kind, location="", owner="alice")
    bee = repo.add_bot_version("bee", "v1", source_kind=kind, location="", owner="bob")
    for seed, version in ((1, v1), (2, v1), (3, v2)):
        store_game(repo, (version.id, bee.id), seed, analysed=True)
    yield Site(repo, tokens, v1.bot_id, {"v1": v1.id, "v2": v2.id, "bee": bee.id})
    repo.close()


def _client(site: Site) -> TestClient:
    settings = WebSettings(secret=b"test-secret-0123456789abcdef", refresh_s=0.0, analysis="off")
    return TestClient(create_app(site.repo, LiveHub(), settings), follow_redirects=False)


@pytest.mark.slow
def test_the_owner_sees_each_versions_lessons_with_boards(site: Site) -> None:
    """alice's page lists v2 then v1, each lesson with a board (the move played outlined, the
    better moves as ghosts), its move, its better moves and sentence, and for the remote v2 the
    commands to compare it locally; nothing of either bot's thinking is on it."""
    book = LessonBook(site.repo)
    expected = {
        name: len(book.of_versions([site.repo.get_bot_version(site.versions[name])]).lessons)
        for name in ("v1", "v2")
    }
    with _client(site) as client:
        sign_in(client, site.tokens["alice"])
        page = client.get(f"/bots/{site.ant}/lessons")
    assert page.status_code == 200
    text = page.text
    assert text.index('id="version-v2"') < text.index('id="version-v1"')
    assert text.count('class="lesson"') == expected["v1"] + expected["v2"] > 0
    assert text.count("<svg") == text.count('class="lesson"')
    assert 'class="ghost' in text and 'class="last"' in text
    assert f"{expected['v1']} lessons from 2 games" in text
    assert re.search(r'<ol class="better"><li><code>PLACE\(', text)
    assert "--version v1 -o v1.jsonl" in text and text.count('class="note compare"') == 1
    # ant connects from elsewhere: the server holds no code to run on v1's lessons.
    assert "cannot run v2 on earlier lessons" in text
    assert not any(secret in text for secret in SECRETS)


@pytest.mark.slow
def test_another_student_and_a_visitor_see_no_lessons(site: Site) -> None:
    """bob gets 404 for alice's bot's lessons (as if it had none), a visitor 401."""
    with _client(site) as client:
        assert client.get(f"/bots/{site.ant}/lessons").status_code == 401
        sign_in(client, site.tokens["bob"])
        denied = client.get(f"/bots/{site.ant}/lessons")
        assert denied.status_code == 404 and 'class="lesson"' not in denied.text
        assert client.get("/instructor/lessons").status_code == 403


@pytest.mark.slow
def test_the_instructor_sees_any_bots_lessons_and_the_class_kinds(site: Site) -> None:
    """carol reads ant's page, and the class page counts every lesson of both bots by kind,
    most common first."""
    book = LessonBook(site.repo)
    lessons = book.of_versions(site.repo.list_bot_versions()).lessons
    kinds = Counter(x.kind for x in lessons).most_common()
    with _client(site) as client:
        sign_in(client, site.tokens["carol"])
        assert client.get(f"/bots/{site.ant}/lessons").status_code == 200
        page = client.get("/instructor/lessons").text
    rows = re.findall(r'<tr><td>([a-z ]+)</td><td class="num">(\d+)</td>', page)
    assert [(k.replace(" ", "_"), int(n)) for k, n in rows] == kinds
    assert f"{len(lessons)} lessons" in page


def _stored_runs(site: Site) -> list[PositionRun]:
    """v2's stored outcomes on v1's lessons: the first solved, the rest missed."""
    v1 = site.repo.get_bot_version(site.versions["v1"])
    lessons = LessonBook(site.repo).of_versions([v1]).lessons
    runs = [
        PositionRun(
            site.versions["v2"],
            v1.id,
            x.game_id,
            x.ply,
            x.seat,
            "solved" if i == 0 else "missed",
            x.good[0][0],
            0.5,
        )
        for i, x in enumerate(lessons)
    ]
    save_runs(site.repo.db, site.versions["v2"], runs)
    return runs


@pytest.mark.slow
def test_stored_lesson_runs_say_what_a_new_version_solves(site: Site) -> None:
    """With v2's runs stored, alice's page says "v2 solves 1 of the N positions v1 lost" and
    lists each position solved or missed with its move; the instructor's class page sums it;
    bob gets 404 and none of it."""
    runs = _stored_runs(site)
    total = len(runs)
    with _client(site) as client:
        sign_in(client, site.tokens["alice"])
        text = client.get(f"/bots/{site.ant}/lessons").text
        sign_in(client, site.tokens["carol"])
        klass = client.get("/instructor/lessons").text
        sign_in(client, site.tokens["bob"])
        denied = client.get(f"/bots/{site.ant}/lessons")
    assert f"v2 solves 1 of the {total} positions v1 lost" in text
    assert text.count('<li class="solved">') == 1
    assert text.count('<li class="missed">') == total - 1
    assert f"game {runs[0].game_uid}</a>, ply {runs[0].ply}: solved" in text
    assert 'class="note compare"' not in text  # the result replaces the commands
    assert re.search(
        rf"<td>alice</td><td>ant@v2</td><td class=\"num\">1</td>"
        rf"<td class=\"num\">{total}</td>",
        klass,
    )
    assert denied.status_code == 404 and "solves" not in denied.text
