"""``python -m client_sdk mine``: which of your bot's failures are new since your last look.

The games already shown are remembered per server and player in a small JSON file in the
user's state folder (``$TETROMINO_STATE_DIR``, else ``~/.local/state/tetromino`` or
``%LOCALAPPDATA%\\tetromino``); nothing else is kept there.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

STATE_ENV = "TETROMINO_STATE_DIR"
#: Game ids remembered per server and player (the oldest are forgotten first).
KEEP = 5000


def state_dir() -> Path:
    explicit = os.environ.get(STATE_ENV)
    if explicit:
        return Path(explicit)
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "tetromino"
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "tetromino"


def _file() -> Path:
    return state_dir() / "seen-failures.json"


def _load() -> dict[str, list[str]]:
    try:
        data = json.loads(_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def new_failures(server: str, player: str, games: Iterable[Any]) -> list[Any]:
    """The games (``MyGame``) your bot lost by a fault that were not shown before; they count
    as shown from now on."""
    key = f"{server} {player}"
    seen_all = _load()
    seen = list(seen_all.get(key) or [])
    known = set(seen)
    fresh = [g for g in games if g.my_fault and g.game_id not in known]
    if fresh:
        seen_all[key] = (seen + [g.game_id for g in fresh])[-KEEP:]
        try:
            _file().parent.mkdir(parents=True, exist_ok=True)
            _file().write_text(json.dumps(seen_all), encoding="utf-8")
        except OSError:
            pass  # a read-only home: every failure stays new, nothing breaks
    return fresh


def every_failure(games: Iterable[Any]) -> list[Any]:
    """Every game (``MyGame``) your bot lost by a fault, shown before or not."""
    return [g for g in games if g.my_fault]


def print_failures(failures: list[Any], server: str, login: str, *, new: bool = True) -> None:
    """Each failure (the new ones, or with ``new`` False all of them) with the command that
    reproduces it, logging in as the command that listed them did (``login``)."""
    which = "new failures since your last look" if new else "failures of your bots"
    if not failures:
        print(f"no {which}" + (" (all of them: mine failures --all)" if new else ""))
        return
    print(f"{which} ({len(failures)}):")
    for g in failures:
        mine = g.seats[g.my_seat] if g.my_seat < len(g.seats) else "?"
        print(f"  {g.game_id}  {g.game}  {mine}: {g.verdict}: {g.reason}")
        # A C++ or JavaScript bot's pack is replayed over gRPC against its command.
        bot, after = ("", " -- YOUR_BOT_COMMAND") if g.my_command else (" BOT", "")
        command = f"python -m client_sdk reproduce {g.game_id}{bot} --server {server} {login}"
        print(f"      {command.rstrip()}{after}")
