"""Identity: casual bots are registered as owner/name; a tournament entry resolves to exactly
one bot or fails listing the matches."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.play.bots import register_remote, resolve_bot
from referee.storage import Repository, SourceKind

GREEDY = "client_sdk.examples.greedy_bot"


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    repo = Repository.open(str(tmp_path / "arena.db"))
    for player in ("alice", "bob"):
        repo.create_player(player)
    return repo


def test_entry_named_like_a_students_bot_is_refused_listing_both(
    repo: Repository, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local module and a student's bot of the same name: refused, both listed."""
    (tmp_path / "tactic_bot.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    register_remote(repo, "alice/tactic_bot", owner="alice", hello_name="tactic_bot")
    with pytest.raises(ValueError) as exc:
        resolve_bot(repo, "tactic_bot")
    assert str(exc.value) == (
        "tactic_bot names several bots: the local bot tactic_bot and alice/tactic_bot; "
        "give one of alice/tactic_bot, or sdk:tactic_bot for the local one"
    )
    remote = resolve_bot(repo, "alice/tactic_bot")
    assert remote.source_kind is SourceKind.REMOTE and remote.bot_name == "alice/tactic_bot"


def test_a_shipped_module_is_the_shipped_bot_whatever_a_student_named(repo: Repository) -> None:
    """A student's bot named after a shipped module never makes the module ambiguous: the
    module path launches the shipped bot, and the student's is named in full."""
    register_remote(repo, f"alice/{GREEDY}", owner="alice", hello_name=GREEDY)
    assert resolve_bot(repo, GREEDY).source_kind is SourceKind.SDK_MODULE
    launched = resolve_bot(repo, f"sdk:{GREEDY}")
    assert launched.source_kind is SourceKind.SDK_MODULE
    remote = resolve_bot(repo, f"alice/{GREEDY}")
    assert remote.source_kind is SourceKind.REMOTE and remote.bot_name == f"alice/{GREEDY}"


def test_example_is_launched_when_no_student_bot_shares_its_name(repo: Repository) -> None:
    """The example module is launched, never a remote bot, when nothing else matches."""
    register_remote(repo, "alice/mybot", owner="alice", hello_name="mybot")
    assert resolve_bot(repo, GREEDY).source_kind is SourceKind.SDK_MODULE


def test_bare_name_resolves_to_the_one_owner_who_has_it(repo: Repository) -> None:
    """A bare name one owner has resolves to it; two owners with it is refused, both listed."""
    register_remote(repo, "alice/tactician", owner="alice", hello_name="tactician")
    assert resolve_bot(repo, "tactician").bot_name == "alice/tactician"
    register_remote(repo, "bob/tactician", owner="bob", hello_name="tactician")
    with pytest.raises(ValueError, match="tactician names several bots: alice/tactician, "
                       "bob/tactician; give one of them"):  # fmt: skip
        resolve_bot(repo, "tactician")
    assert resolve_bot(repo, "bob/tactician").owner_id == repo.get_player("bob").id
