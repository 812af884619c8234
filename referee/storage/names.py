"""Names at registration: a player's, a bot's or a version's name is refused unless it
follows the rules of :mod:`referee.text.names` (which also cleans text for display)."""

from __future__ import annotations

from referee.storage.errors import ConflictError
from referee.text.names import MAX_NAME_CHARS, name_problem


class InvalidNameError(ConflictError):
    """A name that may not be registered; the message says what is allowed. A
    :class:`ConflictError`, so every caller that reports a refused registration reports it."""


def _check_part(name: str, what: str) -> str:
    problem = name_problem(name, what, MAX_NAME_CHARS)
    if problem is not None:
        raise InvalidNameError(problem)
    return name


def check_player_name(name: str) -> str:
    """``name`` if a player or team may be registered under it (:class:`InvalidNameError`)."""
    return _check_part(name, "player name")


def check_bot_name(name: str) -> str:
    """``name`` if a bot may be registered under it: a name, or ``owner/name``."""
    owner, sep, rest = name.partition("/")
    if sep:
        _check_part(owner, "bot owner")
        _check_part(rest, "bot name")
        return name
    return _check_part(name, "bot name")


def check_version(version: str) -> str:
    """``version`` if it may name a bot version (the same characters as a name)."""
    return _check_part(version, "version")
