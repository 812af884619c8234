"""The exceptions course bots catch when they try actions on a :class:`~referee.game.Board`."""

from __future__ import annotations

from referee.game.player import PlayerColor


class PlayerException(Exception):
    """Something a player did wrong; ``player`` is the culprit when known."""

    def __init__(self, message: str, player: PlayerColor | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.player = player

    def __str__(self) -> str:
        return self.message


class IllegalActionException(PlayerException):
    """An action that breaks the rules in the current position; the message says which."""
