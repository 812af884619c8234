"""Token roles, expiry, revocation, the keyed hash's key, and old scrypt tokens re-hashed."""

from __future__ import annotations

import os
import stat
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select, text, update

from referee.storage import Database, Repository, open_database
from referee.storage import tokens as tk
from referee.storage.db import downgrade, upgrade
from referee.storage.enums import Role
from referee.storage.models import Token, utcnow
from referee.storage.players import TokenRejected
from referee.storage.secret import ENV_SECRET, ENV_SECRET_FILE, TokenKeyError, load_token_key


def test_tokens_carry_their_role(repo: Repository) -> None:
    """A token resolves to its player and the role it was issued with (student by default)."""
    repo.create_player("ann")
    repo.create_player("prof")
    student = repo.issue_token("ann")
    instructor = repo.issue_token("prof", role=Role.INSTRUCTOR, label="course")
    owner = repo.resolve_token(student)
    assert owner is not None
    assert (owner.player.name, owner.role) == ("ann", Role.STUDENT)
    owner = repo.resolve_token(instructor)
    assert owner is not None
    assert (owner.player.name, owner.role) == ("prof", Role.INSTRUCTOR)
    assert [t.role for t in repo.list_tokens("prof")] == [Role.INSTRUCTOR]
    assert repo.resolve_token(student + "x") is None


def test_roles_rank() -> None:
    """Admin includes instructor includes student, never the other way round."""
    assert Role.ADMIN.allows(Role.INSTRUCTOR) and Role.INSTRUCTOR.allows(Role.STUDENT)
    assert not Role.STUDENT.allows(Role.INSTRUCTOR)
    assert not Role.INSTRUCTOR.allows(Role.ADMIN)


def test_expired_and_revoked_tokens_say_so(repo: Repository) -> None:
    """A token past its expiry or revoked opens nothing, and the rejection says which (the
    secret was right); a wrong secret is only ever 'unknown token'."""
    repo.create_player("ann")
    soon = repo.issue_token("ann", expires_at=utcnow() + timedelta(hours=1))
    gone = repo.issue_token("ann", expires_at=utcnow() - timedelta(seconds=1))
    assert repo.resolve_token(soon) is not None
    with pytest.raises(TokenRejected, match="expired") as caught:
        repo.check_token(gone)
    assert caught.value.secret_ok
    with pytest.raises(TokenRejected, match="expired"):
        repo.check_token(soon, now=utcnow() + timedelta(hours=2))
    key_id = tk.split_token(soon)[0]
    assert repo.revoke_token(key_id)
    with pytest.raises(TokenRejected, match="revoked"):
        repo.check_token(soon)
    with pytest.raises(TokenRejected, match="unknown") as caught:
        repo.check_token(gone[:-2] + "AA" if not gone.endswith("AA") else gone[:-2] + "BB")
    assert not caught.value.secret_ok
    with pytest.raises(TokenRejected, match="revoked"):
        repo.token_owner_by_id(key_id)
    [first, second] = repo.list_tokens("ann")
    assert (first.state(), second.state()) == ("revoked", "expired")


def _plant_legacy_token(db: Database, repo: Repository, player: str) -> str:
    """A token stored the way tokens were before the HMAC (scrypt with a salt)."""
    token = repo.issue_token(player)
    key_id, secret = tk.split_token(token)
    old = tk.legacy_hash(key_id, secret)
    with db.write() as s:
        s.execute(
            update(Token)
            .where(Token.key_id == key_id)
            .values(algorithm=old.algorithm, salt=old.salt, digest=old.digest)
        )
    return token


def _algorithm(db: Database, token: str) -> str:
    with db.read() as s:
        return s.scalars(
            select(Token.algorithm).where(Token.key_id == tk.split_token(token)[0])
        ).one()


def test_legacy_token_is_rehashed_on_its_next_use(db: Database, repo: Repository) -> None:
    """A scrypt-hashed token still opens its player; that success replaces its hash with the
    HMAC, after which it keeps working and a wrong secret still fails."""
    repo.create_player("ann")
    token = _plant_legacy_token(db, repo, "ann")
    assert _algorithm(db, token) == tk.LEGACY_ALGORITHM
    wrong = token[:-1] + ("A" if token[-1] != "A" else "B")
    assert repo.resolve_token(wrong) is None
    assert _algorithm(db, token) == tk.LEGACY_ALGORITHM
    owner = repo.resolve_token(token)
    assert owner is not None and owner.player.name == "ann"
    assert _algorithm(db, token) == tk.hmac_algorithm(db.token_key)
    assert repo.resolve_token(token) is not None
    assert repo.resolve_token(wrong) is None


def test_token_made_under_another_key_is_refused_by_name(db: Database, repo: Repository) -> None:
    """When the server's token key changed, an old token is refused with the key it was
    hashed under named (not mistaken for a wrong secret)."""
    repo.create_player("ann")
    token = repo.issue_token("ann")
    old = tk.key_fingerprint(db.token_key)
    db.use_token_key(b"another key, at least thirty-two chars long")
    with pytest.raises(TokenRejected, match=old):
        repo.check_token(token)


def test_token_key_file_is_made_private_beside_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first use creates ``<db>.token-key`` with mode 0600; a second opening reads the
    same key, so tokens survive restarts; the environment overrides the file."""
    monkeypatch.delenv(ENV_SECRET, raising=False)
    monkeypatch.delenv(ENV_SECRET_FILE, raising=False)
    path = tmp_path / "arena.db"
    with open_database(path) as db:
        repo = Repository(db)
        repo.create_player("ann")
        token = repo.issue_token("ann")
    key_file = tmp_path / "arena.db.token-key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    with open_database(path) as db:
        assert Repository(db).resolve_token(token) is not None
    monkeypatch.setenv(ENV_SECRET, "s" * 40)
    assert load_token_key(f"sqlite:///{path}") == b"s" * 40
    monkeypatch.setenv(ENV_SECRET, "short")
    with pytest.raises(TokenKeyError, match="shorter"):
        load_token_key(f"sqlite:///{path}")


def test_token_key_readable_by_others_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key file other users can read is refused with the chmod that fixes it."""
    monkeypatch.delenv(ENV_SECRET, raising=False)
    key_file = tmp_path / "key"
    key_file.write_text("k" * 64)
    os.chmod(key_file, 0o644)
    monkeypatch.setenv(ENV_SECRET_FILE, str(key_file))
    with pytest.raises(TokenKeyError, match="chmod 600"):
        load_token_key("sqlite:///" + str(tmp_path / "x.db"))


def test_migration_keeps_old_tokens_as_students(pristine_url: str) -> None:
    """A database made before roles, holding a scrypt token, migrates to head on both
    backends: the token becomes a student's with no expiry, works, and is re-hashed."""
    db = open_database(pristine_url, migrate=False)
    try:
        upgrade(db.engine, "0002")
        secret = "s" * 43
        old = tk.legacy_hash("0123456789abcdef", secret)
        with db.engine.begin() as conn:
            conn.exec_driver_sql(
                "INSERT INTO players (name, kind, created_at) VALUES ('ann', 'player', "
                "CURRENT_TIMESTAMP)"
            )
            conn.execute(
                text(
                    "INSERT INTO tokens (player_id, key_id, algorithm, salt, digest, created_at)"
                    " SELECT id, :k, :a, :s, :d, CURRENT_TIMESTAMP FROM players"
                ),
                {"k": old.key_id, "a": old.algorithm, "s": old.salt, "d": old.digest},
            )
        upgrade(db.engine)
        repo = Repository(db)
        owner = repo.resolve_token(f"arena_{old.key_id}_{secret}")
        assert owner is not None
        assert (owner.player.name, owner.role, owner.expires_at) == ("ann", Role.STUDENT, None)
        assert _algorithm(db, f"arena_{old.key_id}_{secret}").startswith("hmac-sha256:")
        downgrade(db.engine, "0002")
        upgrade(db.engine)
    finally:
        db.close()
