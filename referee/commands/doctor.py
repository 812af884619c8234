"""``referee doctor``: check this host for everything the referee uses, with the fixes."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from referee.commands._common import Subparsers

if TYPE_CHECKING:
    from referee.doctor import Check


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check this host for everything the referee uses",
        description=(
            "Check bubblewrap and user namespaces, the seccomp filter, cgroups, the per-bot "
            "uids, whether a bot can read this checkout and its Python, the database named by "
            "--db, Chromium (for the browser tests) and free disk; print what works, what is "
            "degraded (the referee runs, with less) and what is broken, with the fix. Exit "
            "status 1 when something is broken, else 0."
        ),
    )
    parser.add_argument(
        "--db", metavar="URL", help="also check this database (SQLite or PostgreSQL)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from referee.doctor import Context, Status, run_checks

    checks = run_checks(Context(db=args.db))
    broken = any(c.status is Status.BROKEN for c in checks)
    if args.json:
        summary = {
            "ok": not broken,
            "degraded": any(c.status is Status.DEGRADED for c in checks),
            "checks": [c.as_dict() for c in checks],
        }
        print(json.dumps(summary))
        return 1 if broken else 0
    _table(checks)
    return 1 if broken else 0


def _table(checks: list[Check]) -> None:
    from rich.table import Column
    from rich.text import Text

    from referee.commands._arena import console
    from referee.commands._safe import SafeTable

    colours = {"works": "green", "degraded": "yellow", "broken": "red", "skipped": "dim"}
    # What was found and the fix are folded onto more lines, never cut: a path or a command
    # cut with "…" cannot be read or pasted.
    table = SafeTable(
        "check",
        "status",
        Column("what was found", overflow="fold"),
        Column("fix", overflow="fold"),
        title="referee doctor",
    )
    for check in checks:
        status = check.status.value
        table.add_row(check.name, Text(status, style=colours[status]), check.detail, check.fix)
    console().print(table, highlight=False)
