"""``referee bot``: register bots (launched by the referee, or remote) and list them."""

from __future__ import annotations

import argparse
from typing import Any

from referee.commands._arena import add_db_option, fail, open_repo


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "bot",
        help="register bots and list them",
        description=(
            "A bot is launched by the referee (a course-style package directory, an SDK "
            "module, a Python file or a shell command) or connects by itself (--remote, with "
            "its owner's token). Each registration is a version; a version names one body of "
            "code for ever (by default the first 12 hex digits of its content hash)."
        ),
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = sub.add_parser("add", help="register a bot version")
    add.add_argument("name", help="the bot's name in tables")
    add.add_argument("spec", nargs="?", help="package dir, SDK module, file.py or command")
    add.add_argument("--version", help="version string (default: from the content hash)")
    add.add_argument("--owner", help="the player or team that owns the bot")
    add.add_argument(
        "--remote",
        action="store_true",
        help="the bot connects by itself with its owner's token (no SPEC)",
    )
    add.add_argument(
        "--hello-name",
        help="remote: the name its Hello gives (default: NAME; python -m client_sdk --name)",
    )
    add.set_defaults(func=_add)
    listing = sub.add_parser("list", help="registered bot versions")
    listing.set_defaults(func=_list)
    for p in (add, listing):
        add_db_option(p)


def _add(args: argparse.Namespace) -> int:
    from referee.storage import ConflictError, NotFoundError
    from referee.tournament.bots import register_remote, register_source

    repo = open_repo(args)
    try:
        if args.remote:
            if args.spec or not args.owner:
                return fail("bot add", "--remote takes no SPEC and needs --owner")
            version = register_remote(
                repo,
                args.name,
                owner=args.owner,
                version=args.version or "1",
                hello_name=args.hello_name,
            )
        else:
            if not args.spec:
                return fail("bot add", "give the bot's SPEC (or --remote)")
            version = register_source(
                repo, args.spec, name=args.name, version=args.version, owner=args.owner
            )
    except (ConflictError, NotFoundError, ValueError, FileNotFoundError) as exc:
        return fail("bot add", exc)
    print(f"registered {version.label} ({version.source_kind}: {version.location})")
    return 0


def _list(args: argparse.Namespace) -> int:
    from rich.table import Table

    from referee.commands._arena import console

    repo = open_repo(args)
    owners = {p.id: p.name for p in repo.list_players()}
    table = Table(title="Bots")
    for column in ("bot@version", "kind", "location", "owner", "registered"):
        table.add_column(column)
    for v in repo.list_bot_versions():
        table.add_row(
            v.label,
            str(v.source_kind),
            v.location,
            owners.get(v.owner_id, "") if v.owner_id else "",
            v.created_at.strftime("%Y-%m-%d %H:%M"),
        )
    console().print(table)
    return 0
