"""What to run after a tournament run: the command that resumes a stopped one, with every option
the resumed run needs again (the database above all: without it, resume looks elsewhere), and,
after a finished one, where the games went and the commands that show them."""

from __future__ import annotations

import argparse
import shlex

from referee.tournament import DEFAULT_REMOTE_WAIT_S

#: Run options worth repeating, by their attribute: the option, and its default.
_VALUED = (
    ("db", "--db", None),
    ("listen", "--listen", None),
    ("remote_timeout", "--remote-timeout", DEFAULT_REMOTE_WAIT_S),
    ("run_concurrency", "--concurrency-now", None),
    ("web", "--web", None),
    ("ladder", "--ladder", "main"),
)
_FLAGS = (
    ("no_ladder", "--no-ladder"),
    ("no_sandbox", "--no-sandbox"),
    ("in_process", "--in-process"),
    ("no_progress", "--no-progress"),
)


def resume_command(args: argparse.Namespace, name: str) -> str:
    """``referee tournament resume NAME`` with the run's own options, ready to paste."""
    words = ["referee", "tournament", "resume", name]
    for attribute, option, default in _VALUED:
        value = getattr(args, attribute, default)
        if value is not None and value != default and not (option == "--ladder" and args.no_ladder):
            words += [option, f"{value:g}" if isinstance(value, float) else str(value)]
    words += [option for attribute, option in _FLAGS if getattr(args, attribute, False)]
    return shlex.join(words)


def next_steps(args: argparse.Namespace, name: str, games: int) -> str:
    """One closing line: how many games went to which database, and the next commands."""
    import os

    from referee.commands._dbopen import shown
    from referee.storage.db import ENV_VAR

    db = getattr(args, "db", None)
    where = shown(db or os.environ.get(ENV_VAR) or "./arena.db")
    option = f" --db {shlex.quote(db)}" if db else ""
    listing = shlex.join(["referee", "games", "--tournament", name]) + option
    return (
        f"{games} games stored in {where} (tournament {name}). Next: `{listing}` lists them, "
        f"`referee serve{option}` shows the tables and replays at http://127.0.0.1:8080"
    )
