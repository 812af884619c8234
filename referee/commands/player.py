"""``referee player``: players and teams, and their tokens (shown once, stored hashed)."""

from __future__ import annotations

import argparse
from typing import Any

from referee.commands._arena import add_db_option, fail, open_repo


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "player",
        help="register players or teams and issue their tokens",
        description=(
            "Players (or teams) own bots and the tokens their remote bots connect with. A "
            "token is printed once and only its hash is stored: keep it, or issue a new one."
        ),
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = sub.add_parser("add", help="register a player and print a token for it")
    add.add_argument("name")
    add.add_argument("--team", action="store_true", help="a team rather than a person")
    add.add_argument("--display-name", help="a longer name to show")
    add.add_argument("--no-token", action="store_true", help="do not issue a token now")
    add.set_defaults(func=_add)
    token = sub.add_parser("token", help="issue another token for a player (printed once)")
    token.add_argument("name")
    token.add_argument("--label", help="a note to tell tokens apart (e.g. 'laptop')")
    token.set_defaults(func=_token)
    revoke = sub.add_parser("revoke", help="revoke a token by its key id (see 'player list')")
    revoke.add_argument("key_id")
    revoke.set_defaults(func=_revoke)
    listing = sub.add_parser("list", help="players and their tokens' key ids")
    listing.set_defaults(func=_list)
    for p in (add, token, revoke, listing):
        add_db_option(p)


def _add(args: argparse.Namespace) -> int:
    from referee.storage import ConflictError, PlayerKind

    repo = open_repo(args)
    try:
        kind = PlayerKind.TEAM if args.team else PlayerKind.PLAYER
        player = repo.create_player(args.name, kind=kind, display_name=args.display_name)
    except ConflictError as exc:
        return fail("player add", exc)
    print(f"registered {player.kind} {player.name}")
    if not args.no_token:
        _print_token(repo.issue_token(player.name), player.name)
    return 0


def _print_token(token: str, name: str) -> None:
    print(f"token for {name} (shown once; only its hash is stored):")
    print(token)


def _token(args: argparse.Namespace) -> int:
    from referee.storage import NotFoundError

    repo = open_repo(args)
    try:
        token = repo.issue_token(args.name, label=args.label)
    except NotFoundError as exc:
        return fail("player token", exc)
    _print_token(token, args.name)
    return 0


def _revoke(args: argparse.Namespace) -> int:
    repo = open_repo(args)
    if not repo.revoke_token(args.key_id):
        return fail("player revoke", f"no active token with key id {args.key_id!r}", 1)
    print(f"revoked {args.key_id}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from rich.table import Table

    from referee.commands._arena import console

    repo = open_repo(args)
    table = Table(title="Players")
    for column in ("name", "kind", "tokens (key id, label, state)"):
        table.add_column(column)
    for p in repo.list_players():
        tokens = [
            f"{t.key_id} {t.label or ''} {'revoked' if t.revoked_at else 'active'}".replace(
                "  ", " "
            )
            for t in repo.list_tokens(p.id)
        ]
        table.add_row(p.name, str(p.kind), "\n".join(tokens))
    console().print(table)
    return 0
