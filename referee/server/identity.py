"""Who a bot session is, as the server's authenticators establish it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a session is: the name the referee knows it by and its player id (token owner)."""

    name: str
    player_id: str | None = None
    #: A one-game credential: it opens exactly one session (which may resume), never two.
    one_session: bool = False
    #: A stored token's role (``student``, ``instructor``, ``admin``) and public id, which with
    #: the bot's name keys the one-live-session rule (``None``: no stored token); see access.py.
    role: str | None = None
    token_id: str | None = None
