"""The instructor's grades and similarity pages: instructors only, the stored report shown,
fragments escaped, the grades as CSV."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from referee.live.hub import LiveHub
from referee.storage import Repository
from referee.storage.enums import Role
from referee.storage.reports import save_report
from referee.web.app import create_app
from referee.web.context import WebSettings

GRADES = {
    "game": "tetress",
    "method": "fixed budget of 2 pairs, 95% interval above 50%",
    "levels": ["reference-L1", "reference-L2", "reference-L3"],
    "played": 8,
    "reused": 0,
    "failed": [],
    "students": [
        {
            "owner": "ann",
            "bot": "ann-bot",
            "version": "abc",
            "grade": 1,
            "highest_beaten": "reference-L1",
            "levels": [
                {
                    "level": "reference-L1",
                    "games": 4,
                    "points": 4.0,
                    "score": 1.0,
                    "beaten": True,
                    "decided_by": "95% interval",
                    "low": 1.0,
                    "high": 1.0,
                },
                {
                    "level": "reference-L2",
                    "games": 4,
                    "points": 1.0,
                    "score": 0.25,
                    "beaten": False,
                    "decided_by": "95% interval",
                    "low": 0.0,
                    "high": 0.6,
                },
                {
                    "level": "reference-L3",
                    "games": 0,
                    "points": 0.0,
                    "score": None,
                    "beaten": False,
                    "decided_by": "not played",
                    "low": None,
                    "high": None,
                },
            ],
        }
    ],
}
PAIR = {
    "a": "ann: ann-bot@abc",
    "b": "bea: bea-bot@def",
    "code": 0.97,
    "shared": 40,
    "behaviour": 1.0,
    "positions": 12,
    "fragments": [
        {
            "a_file": "program.py",
            "a_lines": [3, 9],
            "b_file": "program.py",
            "b_lines": [2, 7],
            "a_text": "x = '<script>alert(1)</script>'",
            "b_text": "y = 2",
        }
    ],
}


@pytest.fixture
def app_client(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    repo = Repository.open(str(tmp_path / "arena.db"))
    for name in ("ann", "prof"):
        repo.create_player(name)
    tokens = {
        "ann": repo.issue_token("ann"),
        "prof": repo.issue_token("prof", role=Role.INSTRUCTOR),
    }
    save_report(repo.db, "grades", GRADES)
    save_report(
        repo.db,
        "similarity",
        {
            "bots": [PAIR["a"], PAIR["b"]],
            "pairs": [PAIR],
            "flagged": [PAIR],
            "method": "winnowing",
            "skipped": [],
        },
    )
    settings = WebSettings(secret=b"test-secret-0123456789abcdef", refresh_s=0.0)
    with TestClient(create_app(repo, LiveHub(), settings), follow_redirects=False) as client:
        yield client, tokens
    repo.close()


def _sign_in(client: TestClient, token: str) -> None:
    page = client.get("/signin")
    csrf = page.cookies.get("arena_csrf") or client.cookies.get("arena_csrf")
    assert client.post("/signin", data={"token": token, "csrf_token": csrf}).status_code == 303


@pytest.mark.parametrize(
    "path", ["/instructor/grades", "/instructor/grades.csv", "/instructor/similarity"]
)
def test_students_and_strangers_are_refused(
    app_client: tuple[TestClient, dict[str, str]], path: str
) -> None:
    """No session: 401; a student's session: 403; the report never shows."""
    client, tokens = app_client
    assert client.get(path).status_code in (303, 401)
    _sign_in(client, tokens["ann"])
    page = client.get(path)
    assert page.status_code == 403 and "ann-bot@abc" not in page.text


def test_instructor_sees_grades_and_csv(app_client: tuple[TestClient, dict[str, str]]) -> None:
    """The grades table and its CSV for the learning-management system."""
    client, tokens = app_client
    _sign_in(client, tokens["prof"])
    page = client.get("/instructor/grades")
    assert page.status_code == 200
    assert "ann-bot@abc" in page.text and "1 (reference-L1)" in page.text
    assert "100% of 4: beaten" in page.text and "not played" in page.text
    csv_text = client.get("/instructor/grades.csv").text.splitlines()
    assert (
        csv_text[1]
        == "ann,ann-bot,abc,1,reference-L1,graded,1.000,4,beaten,0.250,4,not beaten,,0,not played"
    )


def test_instructor_sees_fragments_escaped(app_client: tuple[TestClient, dict[str, str]]) -> None:
    """The flagged pair with its fragments side by side; code from a bot is escaped."""
    client, tokens = app_client
    _sign_in(client, tokens["prof"])
    page = client.get("/instructor/similarity")
    assert page.status_code == 200
    assert "97%" in page.text and "100% of 12" in page.text and "look" in page.text
    assert "<script>alert" not in page.text and "&lt;script&gt;" in page.text
