"""``referee class import roster.csv``: a whole class's players, teams and tokens at once.

The roster is a CSV file with a header row naming at least the columns login,
display name, team and role (in any order, any case, _ or a space; other
columns, such as an e-mail address from the learning-management system, are ignored). A
malformed file is refused before anything is written, with the line and column at fault.
The new tokens are written once to a file of their own (mode 0600, never overwritten): they
exist nowhere else.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from referee.commands._arena import add_db_option, fail, open_repo
from referee.commands._common import Subparsers
from referee.errors import RefereeError

if TYPE_CHECKING:
    from referee.storage.roster import IssuedToken, RosterEntry

REQUIRED = ("login", "display_name", "team", "role")
#: Roles a roster may give: an operator's admin token is made with ``referee player token``.
ROSTER_ROLES = ("student", "instructor")
MAX_ROSTER_BYTES = 4 << 20


class RosterError(RefereeError, ValueError):
    """A malformed roster; the message names the line (and column) at fault."""


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "class", help="a class at once: import a roster of players, teams and tokens"
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    imp = sub.add_parser(
        "import",
        help="create or update players and teams from a roster CSV; tokens for new players",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    imp.add_argument("roster", help="the roster CSV (columns: login, display name, team, role)")
    imp.add_argument(
        "--tokens",
        metavar="FILE",
        help="where to write the new tokens (mode 0600; must not exist); "
        "default: tokens-<UTC time>.csv beside the roster",
    )
    add_db_option(imp)
    imp.set_defaults(func=_import)


@dataclass(frozen=True, slots=True)
class _Header:
    columns: dict[str, int]
    width: int


def parse_roster(data: bytes) -> list[RosterEntry]:
    """The entries of a roster file (:class:`RosterError` naming line and column)."""

    if len(data) > MAX_ROSTER_BYTES:
        raise RosterError(f"the roster is larger than {MAX_ROSTER_BYTES >> 20} MB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise RosterError(f"line {line}: not UTF-8 text (byte {exc.start})") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    entries: list[RosterEntry] = []
    seen: dict[str, int] = {}
    header: _Header | None = None
    try:
        for fields in reader:
            line = reader.line_num
            if not any(f.strip() for f in fields):
                continue
            if header is None:
                header = _header(fields, line)
                continue
            entry = _entry(fields, header, line)
            if entry.login in seen:
                raise RosterError(
                    f"line {line}, column {header.columns['login'] + 1} (login): "
                    f"{entry.login!r} is already on line {seen[entry.login]}"
                )
            seen[entry.login] = line
            entries.append(dataclasses.replace(entry, line=line))
    except csv.Error as exc:
        raise RosterError(f"line {reader.line_num}: {exc}") from None
    if header is None:
        raise RosterError("line 1: the roster is empty (no header row)")
    clash = sorted({e.team for e in entries if e.team} & set(seen))
    if clash:
        raise RosterError(f"line {seen[clash[0]]}: {clash[0]!r} is both a login and a team")
    return entries


def _header(fields: Sequence[str], line: int) -> _Header:
    columns: dict[str, int] = {}
    for index, raw in enumerate(fields):
        key = "_".join(raw.strip().lower().replace("-", " ").split())
        if key in columns:
            raise RosterError(f"line {line}, column {index + 1}: column {raw!r} appears twice")
        columns[key] = index
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        shown = ", ".join(repr(m.replace("_", " ")) for m in missing)
        raise RosterError(f"line {line}: the header lacks the column(s) {shown}")
    return _Header(columns, len(fields))


def _entry(fields: Sequence[str], header: _Header, line: int) -> RosterEntry:
    from referee.storage.enums import Role
    from referee.storage.roster import RosterEntry
    from referee.text.names import display, name_problem

    if len(fields) != header.width:
        raise RosterError(f"line {line}: {len(fields)} fields where the header has {header.width}")

    def cell(name: str) -> tuple[str, str]:
        index = header.columns[name]
        return fields[index].strip(), f"line {line}, column {index + 1} ({name.replace('_', ' ')})"

    login, where = cell("login")
    problem = name_problem(login, "login")
    if problem is not None:
        raise RosterError(f"{where}: {problem}")
    team, where = cell("team")
    if team and (problem := name_problem(team, "team")) is not None:
        raise RosterError(f"{where}: {problem}")
    role, where = cell("role")
    role = role.lower() or "student"
    if role not in ROSTER_ROLES:
        raise RosterError(
            f"{where}: role {display(role, 20)!r} is not one of {', '.join(ROSTER_ROLES)}"
        )
    shown, _ = cell("display_name")
    return RosterEntry(login, display(shown) or None, team or None, Role(role), line)


def _tokens_file(roster: Path, given: str | None) -> Path:
    if given:
        return Path(given)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return roster.resolve().parent / f"tokens-{stamp}.csv"


def write_tokens(fd: int, issued: Sequence[IssuedToken]) -> None:
    """The new tokens as CSV into ``fd`` (a new file of mode 0600), synced to disk."""
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["login", "display_name", "team", "role", "token"])
        for t in issued:
            writer.writerow([t.login, t.display_name or "", t.team or "", t.role.value, t.token])
        out.flush()
        os.fsync(out.fileno())


def _discard(fd: int | None, target: Path) -> None:
    """Close and remove the tokens file this run made (``fd``: ``None`` when it made none)."""
    if fd is not None:
        os.close(fd)
        target.unlink()


def _import(args: argparse.Namespace) -> int:
    from referee.storage import ConflictError
    from referee.storage.roster import apply_roster, without_tokens

    roster = Path(args.roster)
    try:
        entries = parse_roster(roster.read_bytes())
    except OSError as exc:
        return fail("class import", f"cannot read {roster}: {exc.strerror}")
    except RosterError as exc:
        return fail("class import", f"{roster}: {exc}; nothing was imported")
    target = _tokens_file(roster, args.tokens)
    # The file is made (0600, never over another) before any token exists, so that no token
    # can be issued and then have nowhere to go. An existing file is fine when no login needs
    # a token (the same command run again).
    fd: int | None = None
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        needing = without_tokens(open_repo(args).db, entries)
        if needing:
            return fail(
                "class import",
                f"{target} exists: tokens are never written over a file, and "
                f"{len(needing)} logins need one (e.g. {needing[0]}); give another --tokens file",
            )
    except OSError as exc:
        return fail("class import", f"cannot create {target}: {exc.strerror}")
    try:
        repo = open_repo(args)
        result = apply_roster(repo.db, entries, issue_tokens=fd is not None)
    except BaseException as exc:
        _discard(fd, target)
        if isinstance(exc, ConflictError):
            return fail("class import", f"{exc}; nothing was imported")
        raise
    if fd is not None and result.tokens:
        write_tokens(fd, result.tokens)
    else:
        _discard(fd, target)
    print(
        f"{len(entries)} on the roster: {len(result.created)} new, {len(result.updated)} "
        f"updated, {len(result.unchanged)} unchanged; {len(result.teams_created)} new teams"
    )
    for note in result.notes:
        print(f"note: {note}")
    if result.tokens:
        print(f"{len(result.tokens)} new tokens written to {target} (mode 0600): hand them out,")
        print("then delete the file; they are stored nowhere else.")
    else:
        print("no new tokens: every login already holds an active token")
    return 0
