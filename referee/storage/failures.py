"""What a database failure means, in one line for the person at the terminal.

Every ``referee`` command ends with this line (and exit code 2) instead of a traceback when
the database fails under it: SQLite locked past the busy timeout, a damaged or truncated
SQLite file, a PostgreSQL server that cannot be reached or refuses the role. The line names
the cause and what to do; the error's own first line follows in brackets.
"""

from __future__ import annotations

from collections.abc import Iterator

from referee.storage.locks import is_locked

#: Words of a damaged SQLite file (sqlite3's messages, lower case).
_DAMAGED = ("malformed", "file is not a database", "disk i/o error", "database corrupt")
#: Words of a PostgreSQL server that cannot be reached at all.
_UNREACHABLE = (
    "connection refused",
    "could not connect",
    "connection timeout",
    "timeout expired",
    "could not translate host name",
    "name or service not known",
    "no route to host",
    "network is unreachable",
    "server closed the connection unexpectedly",
)
#: Words of a server that was reached and refused who we connect as.
_REFUSED = (
    "password authentication failed",
    "role",
    "no pg_hba.conf entry",
    "permission denied",
    "authentication failed",
)


def _errors(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, the driver error it wraps, its causes and, for a group, its members."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo.extend(e for e in (getattr(current, "orig", None),) if isinstance(e, BaseException))
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)


#: The driver errors of a database that failed under the command (not of a bad statement,
#: such as a constraint violated, which stays a bug with its traceback).
_KINDS = {"OperationalError", "InterfaceError", "DatabaseError", "InsufficientPrivilege"}


def _is_database_error(exc: BaseException) -> bool:
    module = type(exc).__module__.split(".", 1)[0]
    return module in ("sqlite3", "psycopg", "sqlalchemy") and type(exc).__name__ in _KINDS


def _first_line(exc: BaseException) -> str:
    inner = getattr(exc, "orig", None) or exc
    text = str(inner).strip() or type(inner).__name__
    return text.splitlines()[0].strip()


def describe(exc: BaseException, where: str = "") -> str | None:
    """One line saying what the database failure in ``exc`` (or under it) means, naming
    ``where`` (the database, password hidden); ``None`` when no database error is in it."""
    found = [e for e in _errors(exc) if _is_database_error(e)]
    if not found:
        return None
    db = f"the database {where}" if where else "the database"
    for error in found:
        text = _first_line(error)
        lower = text.lower()
        if is_locked(error):
            return (
                f"{db} is locked by another process and stayed locked past the wait; try "
                f"again once that process is done ({text})"
            )
        if any(word in lower for word in _DAMAGED):
            return f"{db} is damaged or truncated: restore it from a backup ({text})"
        if any(word in lower for word in _UNREACHABLE):
            return f"cannot reach the database server of {where or 'the database'} ({text})"
        if any(word in lower for word in _REFUSED):
            return f"the database server refused the connection: check the role ({text})"
    return f"{db} failed: {_first_line(found[-1])}"
