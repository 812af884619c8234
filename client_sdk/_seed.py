"""The seed the referee hands a bot for each game, so its game can be replayed exactly.

The referee gives every seat of every game a seed (``GameInfo.seed`` in its ``GameStart``; a
bot it launches also finds it in ``TETROMINO_SEED``) and records it with the game and in a
failure pack; ``python -m client_sdk reproduce`` hands the bot the same messages, so the same
seed. Before the agent of a game is made the SDK seeds Python's :mod:`random` with it; a bot
that draws from a generator of its own seeds it from :func:`game_seed`.
"""

from __future__ import annotations

import os
import random

SEED_ENV = "TETROMINO_SEED"

#: The seed of the game whose agent was made last (None: no game handed one yet).
_handed: int | None = None


def game_seed() -> int | None:
    """The seed of this bot's game: the one the referee handed it with the game, else
    ``TETROMINO_SEED``; None when it was given none."""
    if _handed is not None:
        return _handed
    text = os.environ.get(SEED_ENV, "").strip()
    try:
        return int(text) if text else None
    except ValueError:
        return None


def apply_seed() -> int | None:
    """Seed :mod:`random` with :func:`game_seed`, if there is one; returns it."""
    seed = game_seed()
    if seed is not None:
        random.seed(seed)
    return seed


def use_game_seed(seed: int) -> None:
    """Make ``seed`` the game's: :func:`game_seed` returns it, :mod:`random` is seeded with it."""
    global _handed
    _handed = seed
    random.seed(seed)
