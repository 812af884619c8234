"""``referee db``: the database schema, on its own (a deployment's migration step)."""

from __future__ import annotations

import argparse

from referee.commands._arena import add_db_option, open_repo
from referee.commands._common import Subparsers


def register(subparsers: Subparsers) -> None:
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
    upgrade = actions.add_parser(
        "upgrade",
        help="migrate the schema to the newest revision (on PostgreSQL, make the job queue's "
        "tables too)",
    )
    add_db_option(upgrade)
    upgrade.set_defaults(func=run_upgrade)


def run_upgrade(args: argparse.Namespace) -> int:
    from referee.storage.db import current_revision

    # Opening migrates to head (under a lock on PostgreSQL, so concurrent starts are safe).
    repo = open_repo(args)
    try:
        print(f"schema at {current_revision(repo.db.engine)}")
        url = repo.db.url
        on_postgres = repo.db.engine.dialect.name == "postgresql"
    finally:
        repo.close()
    if on_postgres:
        # The job queue's tables (procrastinate's schema) live in the same database. Imported
        # only here: loading the queue's library starts a process (croniter asks `file` for
        # the interpreter's architecture), which a SQLite upgrade has no need of.
        import asyncio

        from referee.workers.queue import ensure_schema

        made = asyncio.run(ensure_schema(url))
        print("job queue schema " + ("made" if made else "present"))
    return 0
