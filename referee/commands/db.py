"""``referee db``: the database schema, on its own (a deployment's migration step)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "db",
        help="migrate the database schema (deployments run this once before the servers)",
        description=(
            "Every command migrates the database it opens to the newest schema; a deployment "
            "with several processes (a server and workers) runs `referee db upgrade` once "
            "first, so none of them starts on an old schema or waits on another's migration."
        ),
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    upgrade = actions.add_parser("upgrade", help="migrate the schema to the newest revision")
    upgrade.add_argument(
        "--db",
        metavar="URL",
        help="SQLite file or URL (default $ARENA_DATABASE_URL, else ./arena.db)",
    )
    upgrade.add_argument(
        "--create", action="store_true", help="create the --db SQLite file if it does not exist"
    )
    upgrade.set_defaults(func=run_upgrade)


def run_upgrade(args: argparse.Namespace) -> int:
    from referee.commands._dbopen import open_or_exit
    from referee.storage.db import current_revision

    # Opening migrates to head (under a lock on PostgreSQL, so concurrent starts are safe).
    repo = open_or_exit("db upgrade", args.db, create=args.create)
    try:
        print(f"schema at {current_revision(repo.db.engine)}")
    finally:
        repo.close()
    return 0
