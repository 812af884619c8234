"""The server's token key: the secret every stored token hash is keyed with.

Where it comes from, first match wins:

1. ``$ARENA_TOKEN_SECRET``: the key itself (any text of at least 32 characters);
2. ``$ARENA_TOKEN_SECRET_FILE``: a file holding it (created if missing, as below);
3. beside a SQLite database file ``arena.db``: ``arena.db.token-key``;
4. for another database (PostgreSQL): ``~/.config/tetromino-arena/token-key``.

A missing file is created on first use with 32 random bytes (hex), mode 0600, atomically (two
processes starting at once end up with the same key). The CLI that issues tokens and the server
that checks them must see the same key: with PostgreSQL and the two on different machines,
give both the same ``ARENA_TOKEN_SECRET_FILE`` content. Losing the key invalidates every token
issued under it (issue new ones); a token hashed under another key is refused and the server
logs which key it was made with.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from sqlalchemy.engine import make_url

from referee.errors import RefereeError

ENV_SECRET = "ARENA_TOKEN_SECRET"
ENV_SECRET_FILE = "ARENA_TOKEN_SECRET_FILE"
KEY_SUFFIX = ".token-key"
_MIN_SECRET_CHARS = 32


class TokenKeyError(RefereeError, RuntimeError):
    """The token key cannot be read or is unfit (too short, readable by others)."""


def key_path(url: str) -> Path | None:
    """Where the key file for the database at ``url`` lives (``None``: an in-memory SQLite
    database, whose tokens die with it, gets a key of its own process)."""
    named = os.environ.get(ENV_SECRET_FILE)
    if named:
        return Path(named)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if not database or database == ":memory:" or database.startswith("file::memory"):
            return None
        return Path(database).resolve().with_name(Path(database).name + KEY_SUFFIX)
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config / "tetromino-arena" / "token-key"


def load_token_key(url: str) -> bytes:
    """The token key for the database at ``url`` (see the module docstring for where)."""
    given = os.environ.get(ENV_SECRET)
    if given:
        return _checked(given.strip(), ENV_SECRET)
    path = key_path(url)
    if path is None:
        return secrets.token_bytes(32)
    if not path.exists():
        _create(path)
    return _read(path)


def _create(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(secrets.token_hex(32) + "\n")
        # link() fails if another process made the key meanwhile: theirs is kept.
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _read(path: Path) -> bytes:
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise TokenKeyError(f"cannot read the token key {path}: {exc}") from exc
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise TokenKeyError(
            f"the token key {path} is readable by other users (mode {stat.S_IMODE(mode):o}); "
            f"chmod 600 {path}"
        )
    return _checked(text, str(path))


def _checked(text: str, where: str) -> bytes:
    if len(text) < _MIN_SECRET_CHARS:
        raise TokenKeyError(f"the token key in {where} is shorter than {_MIN_SECRET_CHARS} chars")
    return text.encode()
