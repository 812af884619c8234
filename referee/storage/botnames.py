"""Which bot a name typed by a person means.

A bot's name is its registered name, unique, shown the same way by the CLI, the web and the
API: ``greedy`` (registered by the instructor), ``alice/my_bot`` (registered by alice's
client when her bot first connected), ``alice-my_bot`` (an upload). People type the short
form too (``my_bot``): it means the bot whose name is its owner's name, then ``/`` or ``-``,
then ``my_bot``, when exactly one bot is named so; when several are, the answer names them.
"""

from __future__ import annotations

from referee.errors import RefereeError
from referee.storage.errors import NotFoundError
from referee.storage.repository import Repository


class AmbiguousName(RefereeError, ValueError):
    """A short name that several bots answer to; ``str()`` names them."""


def short_name_matches(repo: Repository, short: str) -> list[str]:
    """The registered names of the bots ``short`` is the short form of (sorted)."""
    owners = {p.id: p.name for p in repo.list_players()}
    found = set()
    for v in repo.list_bot_versions():
        owner = owners.get(v.owner_id) if v.owner_id is not None else None
        if owner and v.bot_name in (f"{owner}/{short}", f"{owner}-{short}"):
            found.add(v.bot_name)
    return sorted(found)


def resolve_bot_name(repo: Repository, text: str) -> str:
    """The registered name ``text`` means: itself when a bot has that name, else the one bot
    it is the short form of. :class:`NotFoundError` when none, :class:`AmbiguousName` when
    several."""
    if repo.list_bot_versions(text):
        return text
    matches = short_name_matches(repo, text)
    if len(matches) > 1:
        raise AmbiguousName(f"{text} names several bots: {', '.join(matches)}; give one of them")
    if not matches:
        raise NotFoundError(f"no bot {text!r}")
    return matches[0]
