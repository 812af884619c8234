"""``referee player``: players and teams, and their tokens (shown once, stored hashed).

These commands open the database directly, so whoever runs them is the operator (admin):
they are not checked against a token.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from referee.commands._arena import add_db_option, fail, open_repo
from referee.commands._common import Subparsers

if TYPE_CHECKING:
    from referee.storage.enums import Role


def register(subparsers: Subparsers) -> None:
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
    token = sub.add_parser(
        "token",
        help="issue another token for a player (printed once)",
        description=(
            "Issue a token. Its role says what it may do: student (play, submit, see their "
            "own private data), instructor (also run tournaments and see every player's "
            "private data), admin (the operator: everything). See docs/security.md."
        ),
    )
    token.add_argument("name")
    token.add_argument("--label", help="a note to tell tokens apart (e.g. 'laptop')")
    token.set_defaults(func=_token)
    for p in (add, token):
        p.add_argument(
            "--role",
            choices=[r.value for r in _roles()],
            default="student",
            help="what the token may do (default: student)",
        )
        p.add_argument(
            "--expires",
            metavar="WHEN",
            type=_expiry,
            help="the token stops working after WHEN: a duration (30d, 12h, 90m, 2w) or a "
            "UTC date/time (2027-01-31, 2027-01-31T18:00); default: never (until revoked)",
        )
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
        token = repo.issue_token(player.name, role=args.role, expires_at=args.expires)
        _print_token(token, player.name, args)
    return 0


def _roles() -> list[Role]:
    from referee.storage.enums import Role

    return list(Role)


_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def _expiry(text: str) -> datetime:
    """``30d``-style durations from now, or an ISO date/time read as UTC."""
    from referee.storage.models import utcnow

    text = text.strip()
    number, unit = text[:-1], text[-1:].lower()
    if unit in _UNITS and number.isdigit():
        return utcnow() + timedelta(seconds=int(number) * _UNITS[unit])
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither a duration (30d, 12h, 90m, 2w) nor a date (2027-01-31)"
        ) from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _print_token(token: str, name: str, args: argparse.Namespace) -> None:
    until = f", expires {_stamp(args.expires)}" if args.expires else ""
    print(f"{args.role} token for {name}{until} (shown once; only its hash is stored):")
    print(token)


def _stamp(when: datetime) -> str:
    return when.isoformat(timespec="minutes").replace("+00:00", "Z")


def _token(args: argparse.Namespace) -> int:
    from referee.storage import NotFoundError

    repo = open_repo(args)
    try:
        token = repo.issue_token(
            args.name, label=args.label, role=args.role, expires_at=args.expires
        )
    except NotFoundError as exc:
        return fail("player token", exc)
    _print_token(token, args.name, args)
    return 0


def _revoke(args: argparse.Namespace) -> int:
    repo = open_repo(args)
    if not repo.revoke_token(args.key_id):
        return fail("player revoke", f"no active token with key id {args.key_id!r}", 1)
    print(f"revoked {args.key_id}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from referee.commands._arena import console
    from referee.commands._safe import SafeTable as Table
    from referee.commands._safe import lines

    repo = open_repo(args)
    table = Table(title="Players")
    for column in ("name", "kind", "tokens (key id, role, label, state)"):
        table.add_column(column)
    for p in repo.list_players():
        tokens = [
            " ".join(
                part
                for part in (
                    t.key_id,
                    str(t.role),
                    t.label or "",
                    t.state(),
                    f"until {_stamp(t.expires_at)}" if t.expires_at else "",
                )
                if part
            )
            for t in repo.list_tokens(p.id)
        ]
        table.add_row(p.name, str(p.kind), lines(tokens))
    console().print(table)
    return 0
