"""Games by name, so the rest of the system can treat every game alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.errors import UnknownGameError
from engine.game import Game

GameFactory = Callable[..., Game[Any]]

_REGISTRY: dict[str, GameFactory] = {}


def register_game(name: str, factory: GameFactory) -> None:
    """Register ``factory`` (called with the game's parameters as keywords) under ``name``."""
    if name in _REGISTRY and _REGISTRY[name] is not factory:
        raise ValueError(f"game {name!r} is already registered")
    _REGISTRY[name] = factory


def load_game(name: str, **params: int) -> Game[Any]:
    """A game by registered name, e.g. ``load_game("tetress")`` or
    ``load_game("att", max_placer_turns=100)``; unknown parameters raise ``TypeError``."""
    _load_builtin_games(name.lower())
    try:
        factory = _REGISTRY[name.lower()]
    except KeyError:
        _load_builtin_games()
        known = ", ".join(sorted(_REGISTRY))
        raise UnknownGameError(f"unknown game {name!r}; known games: {known}") from None
    return factory(**params)


def game_names() -> list[str]:
    """Names of every registered game, sorted."""
    _load_builtin_games()
    return sorted(_REGISTRY)


#: The built-in games' packages (importing one registers it).
_BUILTIN = {"att": "engine.att", "tetress": "engine.tetress"}


def _load_builtin_games(name: str | None = None) -> None:
    """Import the built-in game ``name`` (``None``: all of them). Imported lazily, one at a
    time, so that playing one game never pays for the others' tables."""
    from importlib import import_module

    for game, module in _BUILTIN.items():
        if name is None or name == game:
            import_module(module)
