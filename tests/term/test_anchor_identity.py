"""Anchors by identity: only a launched bot with the shipped code is pinned, whatever a
remote bot or an upload calls itself."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from termgames import store_game

from referee.analysis.anchors import anchor_of, anchored_versions
from referee.commands.main import main
from referee.play.bots import register_remote, register_source, resolve_bot
from referee.storage import ConflictError, Repository, SourceKind
from referee.submissions.naming import bot_name
from referee.submissions.service import NameTaken

GREEDY = "client_sdk.examples.greedy_bot"
RANDOM = "client_sdk.examples.random_bot"
EXAMPLES = Path(__file__).resolve().parents[2] / "client_sdk" / "examples"


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    repo = Repository.open(str(tmp_path / "arena.db"))
    repo.create_player("alice")
    return repo


def test_launched_shipped_bots_are_anchors_by_their_code(repo: Repository, tmp_path: Path) -> None:
    """The shipped modules (by module path or by file path, with their class) are anchors."""
    assert anchor_of(register_source(repo, GREEDY)) == "greedy"
    level2 = register_source(repo, f"{EXAMPLES / 'reference_bot.py'}:Level2")
    assert anchor_of(level2) == "reference-L2"
    level3 = register_source(repo, "client_sdk.examples.reference_bot:Level3")
    assert anchor_of(level3) == "reference-L3"


def test_spoofed_anchors_are_ordinary_bots(repo: Repository, tmp_path: Path) -> None:
    """A remote bot named like the greedy example, an edited copy of the random example and a
    shell command are never anchors."""
    remote = register_remote(repo, f"alice/{GREEDY}", owner="alice", hello_name=GREEDY)
    assert remote.location == GREEDY and anchor_of(remote) is None
    edited = tmp_path / "random_bot.py"
    shutil.copy(EXAMPLES / "random_bot.py", edited)
    edited.write_text(edited.read_text() + "\n# stronger now\n")
    copy = register_source(repo, str(edited))
    assert copy.source_kind is SourceKind.SDK_MODULE and anchor_of(copy) is None
    command = repo.add_bot_version(
        "cmd", "1", source_kind=SourceKind.COMMAND, location=RANDOM, content_hash=None
    )
    assert anchor_of(command) is None
    assert set(anchored_versions(repo).values()) == set()


def test_shipped_module_names_are_refused_for_remote_bots_and_uploads(repo: Repository) -> None:
    """Naming a remote bot or an upload after a shipped module is refused with the reason."""
    with pytest.raises(ConflictError, match="shipped bot's module path"):
        register_remote(repo, GREEDY, owner="alice")
    with pytest.raises(NameTaken, match="no dots"):
        bot_name(GREEDY, "alice", None)  # type: ignore[arg-type]


def test_leaderboard_anchors_never_pins_a_spoofed_remote_bot(
    repo: Repository, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A strong remote bot calling itself the random example is fitted, not pinned at 1000:
    only the launched random example is pinned."""
    spoof = register_remote(repo, f"alice/{RANDOM}", owner="alice", hello_name=RANDOM)
    real = register_source(repo, RANDOM)
    greedy = register_source(repo, GREEDY)
    for _ in range(6):
        store_game(repo, spoof.id, real.id, 0)
        store_game(repo, real.id, spoof.id, 1)
        store_game(repo, greedy.id, real.id, 0)
    code = main(["leaderboard", "--anchors", "--db", str(tmp_path / "arena.db")])
    out = capsys.readouterr().out
    assert code == 0, out
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines()]
    rows = {c[1]: c for c in cells if len(c) == 6 and "@" in c[1]}
    spoofed = next(r for name, r in rows.items() if name.startswith("alice/"))
    assert spoofed[5] == "" and float(spoofed[2].rstrip("?")) > 1100
    pinned = [name for name, r in rows.items() if r[5] == "pinned"]
    assert sorted(n.split("@")[0] for n in pinned) == ["greedy_bot", "random_bot"]


def test_shipped_bot_names_stay_the_shipped_bots(repo: Repository, tmp_path: Path) -> None:
    """An upload, a remote bot or an instructor's registration may not take a shipped bot's
    name (``greedy_bot``, ``Level2``, any case); a student's package in a folder named like a
    shipped bot is numbered (``greedy_bot-2``) even when registered first, and the shipped
    example keeps ``greedy_bot``."""
    with pytest.raises(NameTaken, match="shipped with the SDK"):
        bot_name("greedy_bot", "alice", None)  # type: ignore[arg-type]
    with pytest.raises(ConflictError, match="shipped with the SDK"):
        register_remote(repo, "Level2", owner="alice")
    student = tmp_path / "greedy_bot"
    shutil.copytree(EXAMPLES / "course_greedy", student)
    (student / "program.py").write_text((student / "program.py").read_text() + "\n# mine\n")
    with pytest.raises(ConflictError, match="shipped with the SDK"):
        register_source(repo, str(student), name="GREEDY_BOT")
    assert register_source(repo, str(student)).bot_name == "greedy_bot-2"
    shipped = register_source(repo, GREEDY)
    assert shipped.bot_name == "greedy_bot" and anchor_of(shipped) == "greedy"
    assert register_source(repo, str(EXAMPLES / "course_greedy")).bot_name == "course_greedy"
    # An owner's own name (alice/greedy_bot) is theirs.
    assert register_remote(repo, "alice/greedy_bot", owner="alice").bot_name == "alice/greedy_bot"


def test_tables_and_bot_show_give_the_shipped_name_to_the_shipped_bot(
    repo: Repository, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a student's ``greedy_bot`` folder registered first, the leaderboard, ``bot list``
    and ``bot show greedy_bot`` still call the shipped example ``greedy_bot`` and the
    student's ``greedy_bot-2``."""
    student = tmp_path / "greedy_bot"
    shutil.copytree(EXAMPLES / "course_greedy", student)
    (student / "program.py").write_text((student / "program.py").read_text() + "\n# mine\n")
    mine = register_source(repo, str(student))
    shipped = register_source(repo, GREEDY)
    store_game(repo, mine.id, shipped.id, 0)
    store_game(repo, shipped.id, mine.id, 0)
    db = str(tmp_path / "arena.db")
    assert main(["leaderboard", "--db", db]) == 0
    assert {row[1] for row in _cells(capsys.readouterr().out)} == {"greedy_bot", "greedy_bot-2"}
    assert main(["bot", "list", "--db", db]) == 0
    kinds = {row[0]: row[1] for row in _cells(capsys.readouterr().out)}
    assert kinds[f"greedy_bot@{shipped.version}"] == "sdk_module"
    assert kinds[f"greedy_bot-2@{mine.version}"] == "package"
    assert main(["bot", "show", "greedy_bot", "--db", db]) == 0
    versions = capsys.readouterr().out.splitlines()[1]
    assert versions.startswith(shipped.version) and mine.version not in versions


def _cells(table: str) -> list[list[str]]:
    """The body rows of a printed table, cell by cell."""
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in table.splitlines()]
    return [row for row in rows if len(row) > 2]


def test_a_shipped_module_path_means_the_shipped_bot(repo: Repository) -> None:
    """A remote bot its owner named after a shipped module does not make the instructor's
    ``client_sdk.examples.greedy_bot`` ambiguous: the module path means the shipped bot."""
    register_remote(repo, f"alice/{GREEDY}", owner="alice", hello_name=GREEDY)
    found = resolve_bot(repo, GREEDY)
    assert found.bot_name == "greedy_bot" and anchor_of(found) == "greedy"
    assert resolve_bot(repo, f"alice/{GREEDY}").source_kind is SourceKind.REMOTE
