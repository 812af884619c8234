"""What the games hosted on a referee server are given of it, never the server itself: its
sessions, the one-game tokens of the bots they launch, the addresses those bots connect to and
the notes a new session's Welcome may carry (:meth:`RefereeServer.handle
<referee.server.app.RefereeServer.handle>` makes one)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from client_sdk.proto import referee_pb2 as pb
from referee.server.session import BotSession, Identity

#: A line for a new session's Welcome, or ``None`` (e.g. a running tournament telling a remote
#: bot which names its owner has entered).
WelcomeNote = Callable[[Identity, pb.Hello], str | None]


class SessionPool(Protocol):
    """The open sessions, as those who take them for games see them (the server's lobby)."""

    #: Bumped on every change, so a waiter cannot miss one between looking and waiting.
    @property
    def generation(self) -> int: ...

    def sessions(self) -> list[BotSession]:
        """Open sessions in order of arrival."""
        ...

    async def notify(self) -> None:
        """Wake everyone waiting (a session arrived, left, or became free)."""
        ...

    async def wait_for(
        self, predicate: Callable[[BotSession], bool], timeout: float | None = None
    ) -> BotSession:
        """The first open session matching ``predicate``; ``TimeoutError`` after ``timeout``."""
        ...

    async def wait_change(self, since: int) -> None:
        """Return once :attr:`generation` has moved past ``since``."""
        ...


class OneGameTokens(Protocol):
    """The one-game credentials of the bots a game launches onto the server."""

    def issue(self, player: str) -> str:
        """A new one-game token for ``player``; :meth:`revoke` it when the game is over."""
        ...

    def revoke(self, token: str) -> None: ...

    def holds(self, player: str) -> bool:
        """Whether a one-game token of ``player`` is out (a launched bot's identity)."""
        ...


@dataclass(frozen=True, slots=True)
class ServerHandle:
    """A server as the games hosted on it (matchmaker, tournaments, grading) see it."""

    sessions: SessionPool
    #: ``None``: the server takes no one-game tokens (launched bots cannot join it).
    tokens: OneGameTokens | None
    #: The addresses it listens on (TCP first; the private ``unix:`` socket of sandboxed bots).
    addresses: Callable[[], Sequence[str]]
    #: Add a note to every new session's Welcome, and take it away again.
    add_note: Callable[[WelcomeNote], None]
    drop_note: Callable[[WelcomeNote], None]
