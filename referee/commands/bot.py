"""``referee bot``: register bots (launched by the referee, or remote) and list them."""

from __future__ import annotations

import argparse

from referee.commands._arena import add_db_option, fail, open_repo
from referee.commands._common import Subparsers


def register(subparsers: Subparsers) -> None:
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
    listing = sub.add_parser("list", help="registered bot versions (uploaded ones with status)")
    listing.add_argument("--json", action="store_true", help="one JSON list of versions")
    listing.set_defaults(func=_list)
    show = sub.add_parser(
        "show", help="a bot's versions, validation verdicts and output, and their games"
    )
    show.add_argument("name", help="the bot's name, or its short form (my_bot for alice/my_bot)")
    show.add_argument("--json", action="store_true", help="one JSON object")
    show.set_defaults(func=_show)
    queue = sub.add_parser(
        "queue", help="uploads waiting for or running their full validation games, in order"
    )
    queue.add_argument("--json", action="store_true", help="one JSON list")
    queue.set_defaults(func=_queue)
    for p in (add, listing, show, queue):
        add_db_option(p)


def _add(args: argparse.Namespace) -> int:
    from referee.commands._common import refuse_unloadable
    from referee.play.bots import register_remote, register_source
    from referee.sandbox.launch import parse_bot_spec
    from referee.storage import ConflictError, NotFoundError

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
            refuse_unloadable([parse_bot_spec(args.spec)])
            version = register_source(
                repo, args.spec, name=args.name, version=args.version, owner=args.owner
            )
    except (ConflictError, NotFoundError, ValueError, FileNotFoundError) as exc:
        return fail("bot add", exc)
    print(f"registered {version.label} ({version.source_kind}: {version.location})")
    return 0


def _list(args: argparse.Namespace) -> int:
    import json

    from referee.commands._arena import console
    from referee.commands._botviews import version_rows
    from referee.commands._safe import SafeTable as Table

    repo = open_repo(args)
    found = version_rows(repo)
    if args.json:
        print(json.dumps(found))
        return 0
    table = Table(title="Bots")
    for column in ("bot@version", "kind", "owner", "status", "registered", "location"):
        table.add_column(column)
    for v in found:
        status = v.get("status", "")
        table.add_row(
            f"{v['bot']}@{v['version']}",
            v["kind"],
            v["owner"] or "",
            status + (" (plays)" if v.get("playing") else ""),
            (v["registered_at"] or "")[:16].replace("T", " "),
            v["location"],
        )
    console().print(table)
    return 0


def _queue(args: argparse.Namespace) -> int:
    import dataclasses
    import json
    import time

    from referee.commands._arena import console
    from referee.commands._safe import SafeTable as Table
    from referee.storage.submissions import list_submissions
    from referee.submissions.validation_queue import rows_from_store

    repo = open_repo(args)
    rows = rows_from_store(list_submissions(repo.db), time.time())
    if args.json:
        print(json.dumps([dataclasses.asdict(r) for r in rows]))
        return 0
    table = Table(title=f"Validation queue ({len(rows)})")
    for column in ("place", "team", "bot@version", "state", "since upload"):
        table.add_column(column)
    for r in rows:
        place = str(r.place) if r.place else "-"
        table.add_row(place, r.team, r.label, r.state, f"{r.waited_s:.0f} s")
    console().print(table)
    return 0


def _show(args: argparse.Namespace) -> int:
    import json

    from referee.commands._botviews import bot_detail
    from referee.storage import NotFoundError
    from referee.storage.botnames import AmbiguousName, resolve_bot_name
    from referee.text.names import display

    repo = open_repo(args)
    try:
        detail = bot_detail(repo, resolve_bot_name(repo, args.name))
    except (NotFoundError, AmbiguousName) as exc:
        return fail("bot show", exc)
    if args.json:
        print(json.dumps(detail))
        return 0

    # Every line is outside text (names, reasons, a bot's own output): shown cleaned.
    def say(text: str) -> None:
        print(display(text, 1000))

    say(f"{detail['bot']} (owner {detail['owner'] or '-'})")
    for v in detail["versions"]:
        status = v.get("status", "registered")
        plays = " (plays)" if v.get("playing") else ""
        say(f"  {v['version']}  {v['kind']}  {status}{plays}  {v.get('reason', '')}")
        if v.get("validation_output"):
            for line in v["validation_output"].rstrip().splitlines()[-10:]:
                print(f"      | {display(line, 1000)}")
        for g in v["games"]:
            where = f" [{g['tournament']}]" if g["tournament"] else ""
            where += " (validation)" if g["kind"] == "validation" else ""
            say(
                f"    {g['game_id']}{where} {' vs '.join(g['seats'])}: {g['result']} {g['verdict']}"
            )
    return 0
