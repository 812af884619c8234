"""How an uploaded version is named and registered: its bot's name (given, or made from the
player's and the entry's) and the kind of source it is launched from."""

from __future__ import annotations

from referee.storage import SourceKind
from referee.submissions.errors import NameTaken
from referee.submissions.layout import Entry
from referee.submissions.store import Stored
from referee.text.names import shipped_name_problem


def source_kind(entry: Entry) -> SourceKind:
    """How an upload's entry is registered: a command (built), a package or a module."""
    if entry.language != "python":
        return SourceKind.COMMAND
    return SourceKind.PACKAGE if entry.is_package else SourceKind.SDK_MODULE


def bot_name(name: str | None, player: str, stored: Stored) -> str:
    """The given name, else ``<player>-<entry>`` (every course package is called ``agent``).

    No dots or slashes: a name like ``client_sdk.examples.greedy_bot`` or ``bots/x`` would
    read as the instructor's module or path on ``referee tournament create``.
    """
    text = (name or f"{player}-{stored.entry.name}").strip()
    cleaned = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "_" for c in text)
    if name and (not cleaned or cleaned != text or len(text) > 64):
        raise NameTaken(
            f"bot name {text[:100]!r}: use up to 64 letters, digits, '-' and '_' (no dots)"
        )
    if name and (problem := shipped_name_problem(name)) is not None:
        raise NameTaken(problem)
    cleaned = cleaned[:64]
    return cleaned
