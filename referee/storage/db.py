"""Opening the database: engine and sessions, SQLite pragmas, migrations to head on open.

``open_database()`` with no argument uses ``$ARENA_DATABASE_URL`` or else ``./arena.db``, a
SQLite file created on first use. Any SQLAlchemy URL works, e.g.
``postgresql+psycopg://user@host:5432/arena``. Opening runs the Alembic migrations to head
(configured here in code: an installed copy needs no ``alembic.ini``).

SQLite specifics, and why:

* ``journal_mode=WAL``: readers (leaderboard, gRPC status) never block the writer;
* ``foreign_keys=ON``: SQLite ignores foreign keys unless asked, per connection;
* ``busy_timeout``: a second writer waits for the lock instead of failing at once (30 s, or
  ``$ARENA_DB_BUSY_TIMEOUT_S``); a patient writer then tries again (:mod:`.locks`);
* write transactions start with ``BEGIN IMMEDIATE``: a deferred transaction that reads and
  then writes can fail with "database is locked" *without* waiting when another connection
  committed in between; taking the write lock up front makes writers queue instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from referee.storage import locks
from referee.storage.errors import UnsupportedDatabase
from referee.storage.locks import busy_timeout_s

if TYPE_CHECKING:
    from alembic.config import Config

ENV_VAR = "ARENA_DATABASE_URL"
#: The newest revision in ``migrations/versions`` (a test checks). Opening a database already
#: at this revision skips Alembic entirely: importing it costs more than the rest of a CLI call.
SCHEMA_HEAD = "0008_adaptive_format"
DEFAULT_SQLITE_FILE = "arena.db"
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
_WRITE_OPTION = "arena_write"
#: With a :class:`~referee.storage.locks.LockWait`: a write that finds the database locked
#: past the busy timeout is tried again (see :meth:`Database.wait_for_locks`).
_LOCK_WAIT_OPTION = "arena_lock_wait"
# Any constant: serialises concurrent "migrate on open" across processes on PostgreSQL.
_PG_MIGRATION_LOCK = 0x7E7A_0001


def default_url() -> str:
    """``$ARENA_DATABASE_URL`` if set, else a SQLite file ``arena.db`` in the working dir."""
    return os.environ.get(ENV_VAR) or sqlite_url(Path.cwd() / DEFAULT_SQLITE_FILE)


def sqlite_url(path: str | os.PathLike[str]) -> str:
    """The SQLAlchemy URL of a SQLite file."""
    return f"sqlite:///{Path(path).resolve()}"


@dataclass
class Database:
    """An open database: the engine plus read and write session factories."""

    url: str
    engine: Engine
    _reader: sessionmaker[Session] = field(repr=False)
    _writer: sessionmaker[Session] = field(repr=False)
    _token_key: bytes | None = field(default=None, repr=False)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @property
    def token_key(self) -> bytes:
        """The key stored token hashes are made with (:mod:`referee.storage.secret` says where
        it comes from), read or created on first use."""
        if self._token_key is None:
            from referee.storage.secret import load_token_key

            self._token_key = load_token_key(self.url)
        return self._token_key

    def use_token_key(self, key: bytes) -> None:
        """Use ``key`` instead of the configured token key (e.g. one a test made)."""
        self._token_key = key

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reading; rolled back at the end (nothing it changes is kept)."""
        with self._reader() as session:
            try:
                yield session
            finally:
                session.rollback()

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A session in one transaction: committed if the block ends normally, else rolled
        back entirely."""
        with self._writer() as session, session.begin():
            yield session

    def wait_for_locks(self, wait: locks.LockWait) -> None:
        """Make this process a patient writer: a write transaction that finds the (SQLite)
        database locked past the busy timeout is begun again after ``wait``'s pauses."""
        writer = self.engine.execution_options(**{_WRITE_OPTION: True, _LOCK_WAIT_OPTION: wait})
        self._writer = sessionmaker(writer, expire_on_commit=False)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_database(
    url: str | os.PathLike[str] | None = None, *, migrate: bool = True, echo: bool = False
) -> Database:
    """Open (creating if needed) the database at ``url`` and migrate it to head.

    ``url`` may be a SQLAlchemy URL or a plain file path (taken as a SQLite file).
    """
    url_text = _normalise_url(url)
    engine = make_engine(url_text, echo=echo)
    if migrate and not is_at_head(engine):
        upgrade(engine)
    writer_engine = engine.execution_options(**{_WRITE_OPTION: True})
    return Database(
        url=url_text,
        engine=engine,
        _reader=sessionmaker(engine, expire_on_commit=False),
        _writer=sessionmaker(writer_engine, expire_on_commit=False),
    )


#: A connection to a database server that stopped answering (a cut link drops packets and
#: sends no reset) fails within this many seconds instead of waiting out TCP's retransmissions
#: (about 15 minutes): libpq's connect timeout, TCP keepalives and ``tcp_user_timeout``.
DEAD_LINK_S = 10
#: libpq parameters that bound it (a URL's own values win).
DEAD_LINK_ARGS = {
    "connect_timeout": str(DEAD_LINK_S),
    "keepalives": "1",
    "keepalives_idle": str(DEAD_LINK_S // 2),
    "keepalives_interval": "1",
    "keepalives_count": str(DEAD_LINK_S // 2),
    "tcp_user_timeout": str(DEAD_LINK_S * 1000),
}


def make_engine(url: str, *, echo: bool = False) -> Engine:
    """An engine with this project's per-backend settings (no migration)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        bounds = {k: v for k, v in DEAD_LINK_ARGS.items() if k not in parsed.query}
        return create_engine(url, echo=echo, pool_pre_ping=True, connect_args=bounds)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, echo=echo, pool_pre_ping=True)

    database = parsed.database
    in_memory = not database or database == ":memory:" or database.startswith("file::memory")
    if not in_memory:
        assert database is not None
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    busy_s = busy_timeout_s()
    engine = create_engine(url, echo=echo, connect_args={"timeout": busy_s})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Hand transaction control to SQLAlchemy (the "begin" hook below): pysqlite's own
        # implicit BEGIN cannot be made IMMEDIATE.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={int(busy_s * 1000)}")
            if not in_memory:
                cursor.execute("PRAGMA journal_mode=WAL")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        options = conn.get_execution_options()
        if options.get(_WRITE_OPTION, False):
            locks.begin(conn, "BEGIN IMMEDIATE", options.get(_LOCK_WAIT_OPTION))
        else:
            conn.exec_driver_sql("BEGIN")

    return engine


def is_at_head(engine: Engine) -> bool:
    """Whether the database is exactly at :data:`SCHEMA_HEAD` (read without Alembic)."""
    with engine.connect() as connection:
        if not inspect(connection).has_table("alembic_version"):
            return False
        versions = connection.execute(text("SELECT version_num FROM alembic_version")).all()
        return [row[0] for row in versions] == [SCHEMA_HEAD]


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic configuration built in code; ``connection`` is used by ``env.py``."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("path_separator", "os")
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Run the migrations up to ``revision`` in one transaction."""
    from alembic import command

    with engine.connect() as connection, _foreign_keys_off(connection):
        if engine.dialect.name == "sqlite":
            connection = connection.execution_options(**{_WRITE_OPTION: True})
        with connection.begin():
            if engine.dialect.name == "postgresql":
                connection.execute(
                    text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK}
                )
            command.upgrade(alembic_config(connection), revision)
            _check_foreign_keys(connection)


def downgrade(engine: Engine, revision: str) -> None:
    """Run the migrations down to ``revision`` (``"base"`` empties the database)."""
    from alembic import command

    with engine.connect() as connection, _foreign_keys_off(connection):
        if engine.dialect.name == "sqlite":
            connection = connection.execution_options(**{_WRITE_OPTION: True})
        with connection.begin():
            command.downgrade(alembic_config(connection), revision)
            _check_foreign_keys(connection)


@contextmanager
def _foreign_keys_off(connection: Connection) -> Iterator[None]:
    """SQLite's foreign keys off while migrating (SQLite's own procedure for a schema change):
    batch mode copies a table and drops the old one, and with foreign keys on that drop
    cascades (a new column on ``players`` would delete every player's tokens). The pragma is a
    no-op inside a transaction, so it is set on the driver's connection, outside one."""
    if connection.dialect.name != "sqlite":
        yield
        return
    raw = connection.connection.driver_connection
    assert raw is not None
    raw.execute("PRAGMA foreign_keys=OFF")
    try:
        yield
    finally:
        raw.execute("PRAGMA foreign_keys=ON")


def _check_foreign_keys(connection: Connection) -> None:
    """With the keys off, nothing checked the migrated rows: a dangling reference rolls the
    migration back."""
    if connection.dialect.name == "sqlite":
        dangling = connection.exec_driver_sql("PRAGMA foreign_key_check").all()
        if dangling:
            raise RuntimeError(f"migration left dangling references: {dangling[:5]}")


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at (``None`` when it has never been migrated)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str | None:
    """The newest revision shipped with this code (read from the migration scripts)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def _normalise_url(url: str | os.PathLike[str] | None) -> str:
    text_url = default_url() if url is None else os.fspath(url)
    if "://" not in text_url:
        return sqlite_url(text_url)
    return checked_url(text_url)


#: The databases the referee runs on (SQLAlchemy's backend names), as a person names them.
SUPPORTED = {
    "sqlite": "a SQLite file (a path, or sqlite:///PATH)",
    "postgresql": "PostgreSQL (postgresql://USER@HOST[:PORT]/NAME)",
}
#: Seconds a PostgreSQL server has to answer a new connection (libpq waits for ever without
#: one, and a host that drops packets takes minutes to refuse); ``$ARENA_DB_CONNECT_TIMEOUT_S``.
CONNECT_TIMEOUT_ENV = "ARENA_DB_CONNECT_TIMEOUT_S"
DEFAULT_CONNECT_TIMEOUT_S = 10


def connect_timeout_s() -> int:
    """The PostgreSQL connect timeout: ``$ARENA_DB_CONNECT_TIMEOUT_S`` when it is a whole
    number above 0 (libpq's unit), else :data:`DEFAULT_CONNECT_TIMEOUT_S`."""
    text_value = os.environ.get(CONNECT_TIMEOUT_ENV, "")
    return (
        int(text_value)
        if text_value.isdigit() and int(text_value) > 0
        else DEFAULT_CONNECT_TIMEOUT_S
    )


def checked_url(url: str) -> str:
    """``url`` if it names a database the referee runs on (:class:`UnsupportedDatabase`
    saying which ones otherwise); a PostgreSQL URL gets a connect timeout unless it has one,
    so every connection made from it (the engine's, the job queue's) fails fast."""
    try:
        parsed = make_url(url)
        backend = parsed.get_backend_name()
    except Exception:  # SQLAlchemy's ArgumentError for text that is no URL at all
        backend = None
    if backend not in SUPPORTED:
        scheme = url.split("://", 1)[0]
        raise UnsupportedDatabase(
            f"the referee runs on {' or '.join(SUPPORTED.values())}, not {scheme}"
        )
    if backend == "postgresql" and "connect_timeout" not in parsed.query:
        timeout = str(connect_timeout_s())
        return parsed.update_query_dict({"connect_timeout": timeout}).render_as_string(
            hide_password=False
        )
    return url
