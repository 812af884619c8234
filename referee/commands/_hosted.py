"""``referee tournament start``: hand a tournament to the ``referee serve --db`` on its database
(:mod:`referee.hosting.host`), so students only ever know the server's address."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from referee.commands._arena import add_db_option, fail, open_repo
from referee.commands._common import Subparsers, stored_ref

if TYPE_CHECKING:
    from referee.storage import Repository, TournamentInfo


def register_start(sub: Subparsers) -> None:
    start = sub.add_parser(
        "start",
        help="have referee serve (on this --db) run the tournament",
        description=(
            "Mark the tournament to be run by the referee serve that uses this database: it "
            "starts it within seconds, plays remote entries with the bots connected to its "
            "address and launches the others, and resumes it after a restart. A paused "
            "tournament is queued again."
        ),
    )
    start.add_argument("name", type=stored_ref, help="tournament name or id")
    add_db_option(start)
    start.set_defaults(func=_start)


def add_start_flag(create: argparse.ArgumentParser) -> None:
    create.add_argument(
        "--start",
        action="store_true",
        help="have referee serve (on this --db) run it (= tournament start NAME)",
    )


def hand_to_server(repo: Repository, t: TournamentInfo) -> str:
    """Mark ``t`` as run by the server; the sentence saying so. ``ValueError`` when it is over."""
    from referee.hosting.host import RUN_BY, SERVER
    from referee.storage import TournamentStatus

    if t.status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
        raise ValueError(f"tournament {t.name} is {t.status}: nothing left to run")
    if t.status is TournamentStatus.RUNNING and t.settings.options.get(RUN_BY) != SERVER:
        note = " (it was left running: stop any 'referee tournament run' of it first)"
    else:
        note = ""
    repo.update_tournament_options(t.id, **{RUN_BY: SERVER})
    if t.status is TournamentStatus.PAUSED:
        repo.set_tournament_status(t.id, TournamentStatus.CREATED)
    return (
        f"tournament {t.name} is run by referee serve on this database{note}: it starts within "
        "seconds; bots join with python -m client_sdk --server HOST:PORT --token TOKEN "
        "--name NAME BOT, and 'referee tournament show' follows it"
    )


def _start(args: argparse.Namespace) -> int:
    from referee.storage import NotFoundError

    repo = open_repo(args)
    try:
        t = repo.get_tournament(args.name)
        print(hand_to_server(repo, t))
    except (NotFoundError, ValueError) as exc:
        return fail("tournament start", exc)
    return 0
