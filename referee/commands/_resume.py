"""What to run after a tournament run: the command that resumes a stopped one, with every option
the resumed run needs again (the database above all: without it, resume looks elsewhere), and,
after a finished one, where the games went and the commands that show them."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING

from referee.tournament import DEFAULT_REMOTE_WAIT_S

if TYPE_CHECKING:
    from rich.console import Console

    from referee.storage import Repository, TournamentInfo
    from referee.tournament.runner import RunSummary

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


def db_option(args: argparse.Namespace) -> str:
    """`` --db URL`` when the command was given one (a suggested command must name the same
    database), else nothing."""
    db = getattr(args, "db", None)
    return f" --db {shlex.quote(db)}" if db else ""


def cpu_used() -> str:
    """All the CPU this command has used so far, its bots' included (each bot's cgroup count
    as it was removed; where bots had none, only the referee's own is known)."""
    import resource

    from referee.sandbox.cgroups import removed_cpu_seconds

    own = resource.getrusage(resource.RUSAGE_SELF)
    referee = own.ru_utime + own.ru_stime
    bots = removed_cpu_seconds()
    return f"{referee + bots:.1f} s of CPU in all (bots {bots:.1f} s, referee {referee:.1f} s)"


def next_steps(args: argparse.Namespace, name: str, games: int) -> str:
    """One closing line: how many games went to which database, and the next commands."""
    import os

    from referee.commands._dbopen import shown
    from referee.storage.db import ENV_VAR

    db = getattr(args, "db", None)
    where = shown(db or os.environ.get(ENV_VAR) or "./arena.db")
    option = db_option(args)
    listing = shlex.join(["referee", "games", "--tournament", name]) + option
    return (
        f"{games} games stored in {where} (tournament {name}), {cpu_used()}. "
        f"Next: `{listing}` lists them, "
        f"`referee serve{option}` shows the tables and replays at http://127.0.0.1:8080"
    )


def report_run(
    err: Console,
    summary: RunSummary,
    repo: Repository,
    t: TournamentInfo,
    args: argparse.Namespace,
    print_table: Callable[[Repository, TournamentInfo], None],
) -> int:
    """Say what the run did, print the table and the closing line; the exit status is 1
    unless the tournament is complete."""
    from referee.commands._arena import console
    from referee.commands._safe import esc
    from referee.text.names import display

    if summary.reset:
        err.print(f"resumed: {len(summary.reset)} interrupted pairing(s) replayed")
    if summary.given_up:
        listing = shlex.join(["referee", "games", "--tournament", t.name]) + db_option(args)
        err.print(
            f"[yellow]{summary.given_up} game(s) aborted every time and were stored void with "
            f"the reason (they count for nobody): {esc(listing)}[/yellow]"
        )
    if not summary.complete:
        err.print(
            f"[yellow]{summary.unplayed} game(s) could not be played by the workers; "
            f"the tournament is paused. Resume: "
            f"{esc(resume_command(args, t.name))}[/yellow]"
        )
    print_table(repo, t)
    games = repo.count_games(tournament_id=t.id)
    console().print(display(next_steps(args, t.name, games), 1000), markup=False)
    return 0 if summary.complete else 1
