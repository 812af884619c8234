"""Names at registration: a small character set and length for players and bots, a cleaned
display name, and outside text made safe to show on one line."""

from __future__ import annotations

import pytest

from referee.play.bots import describe_source
from referee.storage import ConflictError, Repository, SourceKind
from referee.storage.names import InvalidNameError, check_bot_name
from referee.text.names import MAX_DISPLAY_CHARS, as_name, display

HOSTILE_NAMES = {
    "ANSI clear screen": "\x1b[2Jalice",
    "OSC-8 link": "\x1b]8;;http://evil.example\x07alice\x1b]8;;\x07",
    "rich markup": "[red]alice[/red]",
    "newline": "alice\nbob",
    "right-to-left override": "alice\u202egnp.exe",
    "10 kB": "a" * 10_000,
    "space": "al ice",
    "slash": "alice/bob",
    "empty": "",
    "dots only": "..",
    "non-ASCII letters": "\u0430lice",
}


@pytest.mark.parametrize("name", list(HOSTILE_NAMES.values()), ids=list(HOSTILE_NAMES))
def test_hostile_player_names_are_refused_with_what_is_allowed(repo: Repository, name: str) -> None:
    """A player name outside ASCII letters, digits and ``-_.`` (or over 64 characters) is
    refused, with a message saying what is allowed and quoting the name only cleaned."""
    with pytest.raises(InvalidNameError) as refused:
        repo.create_player(name)
    message = str(refused.value)
    assert "use 1 to 64 ASCII letters, digits, '-', '_' and '.'" in message
    assert "\x1b" not in message and "\n" not in message and "\u202e" not in message
    assert len(message) < 200
    assert isinstance(refused.value, ConflictError)  # reported wherever a conflict is
    assert repo.list_players() == []


def test_existing_style_names_still_register_and_display_names_are_cleaned(
    repo: Repository,
) -> None:
    """Names of the shapes the project uses (``team-3``, ``alice_2``, ``v1.2``) register; a
    display name keeps its words but loses escapes, bidi marks and newlines, and is capped."""
    for name in ("alice", "team-3", "alice_2", "bob.smith", "A" * 64):
        repo.create_player(name)
    shown = repo.create_player(
        "carol", display_name="Carol \x1b[31mRed\x1b[0m\n\u202eSmith" + "x" * 200
    ).display_name
    assert shown is not None and shown.startswith("Carol Red Smith")
    assert len(shown) == MAX_DISPLAY_CHARS and shown.endswith("…")
    assert repo.create_player("dave", display_name="\x1b[2J\n").display_name is None


def test_bot_names_are_names_or_owner_slash_name(repo: Repository) -> None:
    """A bot registers as ``name`` or ``owner/name`` (each part a name); more slashes, markup
    or spaces are refused; an already registered bot is found as before."""
    repo.create_player("alice")
    for bot in ("greedy", "alice/greedy", "alice/my-bot.v2"):
        repo.add_bot_version(bot, "1", source_kind=SourceKind.REMOTE, location=bot, owner="alice")
    for bad in ("a/b/c", "/greedy", "alice/", "[bold]x", "my bot", "x" * 65):
        with pytest.raises(InvalidNameError):
            repo.add_bot_version(bad, "1", source_kind=SourceKind.REMOTE, location="x")
    with pytest.raises(InvalidNameError, match="version"):
        repo.add_bot_version("greedy", "1 \x1b[2J", source_kind=SourceKind.REMOTE, location="g")
    assert repo.find_bot_version("alice/greedy").label == "alice/greedy@1"
    assert check_bot_name("owner/name") == "owner/name"


def test_outside_text_is_made_one_safe_line() -> None:
    """``display`` removes CSI and OSC sequences, C0/C1 controls, bidi and zero-width
    characters, folds white space and caps the length; ``as_name`` turns anything into a
    registrable name."""
    assert display("\x1b[2J\x1b[31mred\x1b[0m") == "red"
    assert display("\x1b]8;;http://x.example\x07link\x1b]8;;\x1b\\") == "link"
    assert display("a\nb\r\nc\td") == "a b c d"
    assert display("\u202eabc\u2066\u200bdef\u2069") == "abcdef"
    assert display("\x9b31mx\x85y") == "x y"  # NEL is a line break
    assert display("z" * 10_000) == "z" * (MAX_DISPLAY_CHARS - 1) + "…"
    assert as_name("greedy v2") == "greedy_v2"
    assert as_name("\x1b[2J[red]x[/red]\n") == "_red_x_red_"
    assert as_name("\u202e\u200b") == "anonymous"
    assert as_name("\u0430\u0431\u0432") == "anonymous"
    assert len(as_name("n" * 1000)) == 64


def test_a_launchable_bot_with_a_non_ascii_label_gets_an_ascii_name(tmp_path: object) -> None:
    """A module or file whose label has non-ASCII letters registers under an ASCII name."""
    from pathlib import Path

    bot = Path(str(tmp_path)) / "b\u00f6t_\u0431.py"
    bot.write_text("x = 1\n")
    assert describe_source(str(bot)).label == "b_t__"
