"""Players and their API tokens: only a salted hash is stored; verification is exact."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from referee.storage import ConflictError, Database, NotFoundError, PlayerKind, Repository
from referee.storage import tokens as tk
from referee.storage.models import Token


def test_token_authenticates_its_player(repo: Repository) -> None:
    """A freshly issued token identifies its owner and records when it was last used."""
    team = repo.create_player("team-7", kind=PlayerKind.TEAM, display_name="Team Seven")
    token = repo.issue_token("team-7", label="laptop")
    player = repo.authenticate(token)
    assert player is not None
    assert (player.id, player.name, player.kind) == (team.id, "team-7", PlayerKind.TEAM)
    [info] = repo.list_tokens("team-7")
    assert info.label == "laptop"
    assert info.last_used_at is not None


def test_wrong_tokens_fail(repo: Repository) -> None:
    """A changed secret, an unknown key id, another player's key id and garbage all fail."""
    repo.create_player("ann")
    repo.create_player("bob")
    token = repo.issue_token("ann")
    other = repo.issue_token("bob")
    key_id, secret = tk.split_token(token)
    flipped = secret[:-1] + ("A" if secret[-1] != "A" else "B")
    assert repo.authenticate(f"arena_{key_id}_{flipped}") is None
    assert repo.authenticate(f"arena_{'0' * 16}_{secret}") is None
    other_key, _ = tk.split_token(other)
    assert repo.authenticate(f"arena_{other_key}_{secret}") is None
    for garbage in ("", "arena_", secret, "arena_xyz_abc", token + " trailing words"):
        assert repo.authenticate(garbage) is None
    assert repo.authenticate(token) is not None
    assert repo.authenticate(other) is not None


def test_token_is_never_stored_in_clear(db: Database, repo: Repository) -> None:
    """No column of the token row holds the secret; what is stored is a keyed hash that
    another key does not reproduce."""
    repo.create_player("ann")
    token = repo.issue_token("ann")
    key_id, secret = tk.split_token(token)
    with db.read() as s:
        row = s.scalars(select(Token)).one()
        stored = [row.key_id, row.algorithm, row.salt, row.digest, row.label]
        algorithm, salt, digest = row.algorithm, row.salt, row.digest
    assert algorithm == tk.hmac_algorithm(db.token_key)
    for value in stored:
        raw = value if isinstance(value, bytes) else str(value).encode()
        assert secret.encode() not in raw
        assert token.encode() not in raw
    assert tk.verify_secret(secret, tk.TokenHash(key_id, algorithm, salt, digest), db.token_key)
    # Keyed: the same secret under another key hashes differently.
    other = tk.hash_secret(key_id, secret, b"k" * 32)
    assert other.digest != digest


def test_sqlite_file_holds_no_clear_token(tmp_path: Path) -> None:
    """Byte-scan of the SQLite file and its WAL: the secret half of the token is not there."""
    from referee.storage import open_database

    path = tmp_path / "scan.db"
    with open_database(path) as db:
        repo = Repository(db)
        repo.create_player("ann")
        token = repo.issue_token("ann")
        _, secret = tk.split_token(token)
        assert repo.authenticate(token) is not None
        files = [p for p in tmp_path.iterdir() if p.name.startswith("scan.db")]
        for path_ in files:
            assert secret.encode() not in path_.read_bytes()


def test_revoked_token_fails(repo: Repository) -> None:
    """A revoked token no longer authenticates; revoking twice reports nothing to do."""
    repo.create_player("ann")
    token = repo.issue_token("ann")
    key_id, _ = tk.split_token(token)
    assert repo.revoke_token(key_id) is True
    assert repo.revoke_token(key_id) is False
    assert repo.authenticate(token) is None
    assert repo.list_tokens("ann")[0].revoked_at is not None


def test_player_names_are_unique(repo: Repository) -> None:
    """A second player with a taken name is a conflict; unknown players are not found."""
    repo.create_player("ann")
    with pytest.raises(ConflictError):
        repo.create_player("ann")
    with pytest.raises(NotFoundError):
        repo.issue_token("nobody")


def test_hash_verification_is_exact() -> None:
    """The pure helpers: a generated token verifies against its own hash and no other."""
    key = b"k" * 32
    first, second = tk.generate_token(key), tk.generate_token(key)
    assert first.clear != second.clear
    assert first.hashed.digest != second.hashed.digest
    _, secret = tk.split_token(first.clear)
    assert tk.verify_secret(secret, first.hashed, key)
    assert not tk.verify_secret(secret, second.hashed, key)
    with pytest.raises(tk.WrongTokenKey):
        tk.verify_secret(secret, first.hashed, b"j" * 32)
    with pytest.raises(tk.TokenFormatError):
        tk.split_token("not a token")
