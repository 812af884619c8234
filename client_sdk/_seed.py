"""The seed the referee gives a launched bot, so its game can be replayed exactly.

The referee puts a fresh seed in ``TETROMINO_SEED`` for every bot it launches and records it
with the game (and in a failure pack); ``python -m client_sdk reproduce`` gives the bot the
same one. The SDK seeds Python's :mod:`random` with it before loading the bot; a bot that
draws from another generator seeds it from :func:`game_seed`.
"""

from __future__ import annotations

import os
import random

SEED_ENV = "TETROMINO_SEED"


def game_seed() -> int | None:
    """The seed this bot was given (``TETROMINO_SEED``), or None when it was given none."""
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
