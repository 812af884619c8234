"""``referee class import``: a roster makes players, teams and tokens in one transaction,
tokens once to a 0600 file, idempotent again, and a malformed file refused with its line and
column with nothing written."""

from __future__ import annotations

import csv
import stat
from pathlib import Path

import pytest

from referee.commands.classroster import RosterError, parse_roster
from referee.commands.main import main
from referee.storage import Repository
from referee.storage.enums import PlayerKind, Role
from referee.storage.roster import team_of

ROSTER = """Login,Display Name,Team,Role,Email
alice,Alice Liddell,red-team,student,a@example.edu
bob,Bob,red-team,,b@example.edu
carol,"Carol, TA",,instructor,c@example.edu
"""


def _import(tmp_path: Path, text: str, tokens: str) -> tuple[int, str, str]:
    roster = tmp_path / "roster.csv"
    roster.write_text(text, encoding="utf-8")
    db = tmp_path / "arena.db"
    code = main(
        [
            "class",
            "import",
            str(roster),
            "--tokens",
            str(tmp_path / tokens),
            "--db",
            str(db),
            "--create",
        ]
    )
    return code, str(db), str(tmp_path / tokens)


def test_import_creates_players_teams_and_tokens_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Players and the team are made, each login gets one token of its role, written to a
    0600 file; a second import issues nothing and changes nothing."""
    code, db, tokens = _import(tmp_path, ROSTER, "t1.csv")
    assert code == 0, capsys.readouterr().err
    assert stat.S_IMODE(Path(tokens).stat().st_mode) == 0o600
    rows = list(csv.DictReader(Path(tokens).read_text().splitlines()))
    assert [r["login"] for r in rows] == ["alice", "bob", "carol"]
    repo = Repository.open(db)
    for row in rows:
        owner = repo.check_token(row["token"])
        assert owner.player.name == row["login"]
        assert owner.role is (Role.INSTRUCTOR if row["login"] == "carol" else Role.STUDENT)
    assert repo.get_player("red-team").kind is PlayerKind.TEAM
    assert repo.get_player("carol").display_name == "Carol, TA"
    assert team_of(repo.db, "alice") == "red-team" and team_of(repo.db, "carol") is None
    capsys.readouterr()
    code, _, again = _import(tmp_path, ROSTER, "t2.csv")
    out = capsys.readouterr().out
    assert code == 0 and "no new tokens" in out and "0 new, 0 updated, 3 unchanged" in out
    assert not Path(again).exists()
    assert sum(len(repo.list_tokens(n)) for n in ("alice", "bob", "carol")) == 3


def test_reimport_updates_and_tokens_only_the_newcomers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A changed team is updated; only a new login gets a token."""
    _import(tmp_path, ROSTER, "t1.csv")
    changed = ROSTER.replace("bob,Bob,red-team", "bob,Bob,blue-team") + "dan,Dan,,student,\n"
    code, db, tokens = _import(tmp_path, changed, "t2.csv")
    assert code == 0
    assert [r["login"] for r in csv.DictReader(Path(tokens).read_text().splitlines())] == ["dan"]
    assert team_of(Repository.open(db).db, "bob") == "blue-team"
    assert "1 new, 1 updated, 2 unchanged" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("login,display name,team\nx,X,t\n", "line 1: the header lacks the column(s) 'role'"),
        (
            "login,display name,team,role\nok,A,t,student\nbad name,B,t,student\n",
            "line 3, column 1 (login): login 'bad name' is not allowed",
        ),
        (
            "login,display name,team,role\nok,A,t,student,extra\n",
            "line 2: 5 fields where the header has 4",
        ),
        (
            "login,display name,team,role\nok,A,t,wizard\n",
            "line 2, column 4 (role): role 'wizard' is not one of student, instructor",
        ),
        (
            "login,display name,team,role\nok,A,t,\nok,B,t,\n",
            "line 3, column 1 (login): 'ok' is already on line 2",
        ),
        ('login,display name,team,role\nok,"A,t,\n', "line 2: unexpected end of data"),
        ("role,team,display name,login\n,x,X,x\n", "'x' is both a login and a team"),
    ],
)
def test_malformed_rosters_name_line_and_column(text: str, message: str) -> None:
    """Each malformed roster is refused with the line (and column) at fault."""
    with pytest.raises(RosterError) as exc:
        parse_roster(text.encode())
    assert message in str(exc.value)


def test_refused_roster_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bad line or a login named like an existing team: no player, no token, no file."""
    code, db, tokens = _import(tmp_path, ROSTER + "eve,E,,student,\nbad/x,,,,\n", "t.csv")
    assert code == 2 and "line 6, column 1 (login)" in capsys.readouterr().err
    assert not Path(tokens).exists()
    _import(tmp_path, "login,display name,team,role\nzed,Z,red-team,\n", "t0.csv")
    code, db, tokens = _import(
        tmp_path, ROSTER.replace("carol,", "red-team,").replace(",red-team,", ",,"), "t3.csv"
    )
    assert code == 2 and "nothing was imported" in capsys.readouterr().err
    assert not Path(tokens).exists()
    assert [p.name for p in Repository.open(db).list_players()] == ["red-team", "zed"]


def test_existing_tokens_file_is_never_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An existing --tokens file is refused before anything is imported."""
    (tmp_path / "t.csv").write_text("keep me")
    code, _, _ = _import(tmp_path, ROSTER, "t.csv")
    assert code == 2 and "never written over" in capsys.readouterr().err
    assert (tmp_path / "t.csv").read_text() == "keep me"


def test_the_same_import_again_with_the_same_tokens_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Re-running ``class import roster --tokens FILE`` when every login holds a token writes
    nothing and succeeds, leaving FILE as it was; once a newcomer needs a token, the existing
    FILE is refused (naming the newcomer) and nothing is imported."""
    code, db, tokens = _import(tmp_path, ROSTER, "t.csv")
    assert code == 0, capsys.readouterr().err
    first = Path(tokens).read_text()
    code, _, _ = _import(tmp_path, ROSTER, "t.csv")
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "no new tokens" in captured.out and Path(tokens).read_text() == first
    code, _, _ = _import(tmp_path, ROSTER + "dan,Dan,,student,\n", "t.csv")
    err = capsys.readouterr().err
    assert code == 2 and "never written over" in err and "dan" in err
    assert Path(tokens).read_text() == first
    assert "dan" not in [p.name for p in Repository.open(db).list_players()]
