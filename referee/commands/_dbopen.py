"""Opening the database a command was given: one line naming the cause, never a traceback.

Only the default database (``./arena.db`` when neither ``--db`` nor ``$ARENA_DATABASE_URL``
is given) is created silently; any other SQLite file that does not exist is refused unless
the command was given ``--create``, so a typo in a path never starts an empty database.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from referee.errors import RefereeError
from referee.storage.db import ENV_VAR

if TYPE_CHECKING:
    from referee.storage import Repository

#: Exit code of a command whose database cannot be opened (a usage error).
EXIT_BAD_DB = 2


class DatabaseUnavailable(RefereeError):
    """The database cannot be opened; ``str()`` is one line saying why."""


def _sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL or plain path; ``None`` for other backends or memory."""
    if "://" not in url:
        return Path(url)
    if not url.startswith("sqlite:"):
        return None
    rest = url.split("://", 1)[1]
    path = rest[1:] if rest.startswith("/") else rest
    if not path or path == ":memory:" or path.startswith("file::memory"):
        return None
    return Path(path.split("?", 1)[0])


def _cause(exc: BaseException) -> str:
    """The first line of the deepest useful message of ``exc``."""
    inner = getattr(exc, "orig", None) or exc.__cause__ or exc
    text = str(inner).strip() or type(inner).__name__
    return text.splitlines()[0].strip()


def shown(url: str) -> str:
    """``url`` without a password."""
    if "://" not in url or "@" not in url:
        return url
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return url.split("://", 1)[0] + "://…"


def open_repository(db: str | None, *, create: bool = False) -> Repository:
    """The :class:`~referee.storage.Repository` at ``db`` (or the default); raises
    :class:`DatabaseUnavailable` with a one-line reason."""
    from referee.storage import Repository

    explicit = db or os.environ.get(ENV_VAR) or None
    if explicit is not None and not create:
        path = _sqlite_path(explicit)
        if path is not None and not path.exists():
            raise DatabaseUnavailable(
                f"no database at {path} (give --create to make a new one there)"
            )
    try:
        return Repository.open(db)
    except Exception as exc:
        where = shown(explicit) if explicit else "./arena.db"
        raise DatabaseUnavailable(f"cannot open the database {where}: {_cause(exc)}") from None


def open_or_exit(command: str, db: str | None, *, create: bool = False) -> Repository:
    """:func:`open_repository`, or print ``referee COMMAND: reason`` and exit with code 2."""
    try:
        return open_repository(db, create=create)
    except DatabaseUnavailable as exc:
        print(f"referee {command}: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_DB) from None
