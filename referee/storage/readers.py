"""Who may read what of a stored game: the one rule of the web front and the gRPC read
services (docs/web.md, docs/submissions.md).

A rated game is public. A validation game (an upload's private check), and each seat's private
parts (its bot's output and failure pack), are its bot's owner's and the staff's: a caller
whose token has the instructor's or the admin's role.
"""

from __future__ import annotations

from referee.storage.enums import GameKind, Role


def is_staff(role: Role | str | None) -> bool:
    """Whether ``role`` (a token's; None: no caller) reads every player's private parts."""
    return role is not None and Role(role).allows(Role.INSTRUCTOR)


def may_read_game(kind: GameKind, role: Role | str | None, owns_a_seat: bool) -> bool:
    """Whether a caller may read a game of ``kind`` (``owns_a_seat``: one of their bots
    played it)."""
    return kind is GameKind.RATED or owns_a_seat or is_staff(role)


def may_read_seat(role: Role | str | None, owns_seat: bool) -> bool:
    """Whether a caller may read a seat's output and failure pack."""
    return owns_seat or is_staff(role)
