"""API tokens: generated here, shown to their owner once, stored only as a salted hash.

A token reads ``arena_<key id>_<secret>``. The key id is public and indexes the stored row
(a salted hash cannot be looked up by value); the secret is 256 random bits and only its
scrypt hash, with a per-token salt, is kept. Verification recomputes the hash and compares in
constant time.

Why scrypt for random secrets that nobody can guess anyway: it costs a few milliseconds per
authentication (once per bot session, not per move) and keeps a leaked database useless even
if a weaker token format is ever accepted. The parameters are stored with every hash
(``algorithm``), so they can be raised later without invalidating issued tokens.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

PREFIX = "arena"
_KEY_ID_BYTES = 8
_SECRET_BYTES = 32
_SALT_BYTES = 16

# n=2**14, r=8 uses 16 MiB and a few milliseconds; the stdlib's default limit allows it.
_SCRYPT_N = 2**14
_SCRYPT_R = 8
_SCRYPT_P = 1
_DKLEN = 32
ALGORITHM = f"scrypt:{_SCRYPT_N}:{_SCRYPT_R}:{_SCRYPT_P}"

_TOKEN_RE = re.compile(rf"^{PREFIX}_([0-9a-f]{{{2 * _KEY_ID_BYTES}}})_([A-Za-z0-9_-]{{20,200}})$")


class TokenFormatError(ValueError):
    """A string that is not shaped like a token at all."""


@dataclass(frozen=True, slots=True)
class TokenHash:
    """What the database keeps for one token."""

    key_id: str
    algorithm: str
    salt: bytes
    digest: bytes


@dataclass(frozen=True, slots=True)
class NewToken:
    """A freshly generated token: ``clear`` is given to its owner once and never stored."""

    clear: str
    hashed: TokenHash


def generate_token() -> NewToken:
    """A new random token and its salted hash."""
    key_id = secrets.token_hex(_KEY_ID_BYTES)
    secret = secrets.token_urlsafe(_SECRET_BYTES)
    salt = secrets.token_bytes(_SALT_BYTES)
    hashed = TokenHash(key_id, ALGORITHM, salt, _derive(ALGORITHM, secret, salt))
    return NewToken(f"{PREFIX}_{key_id}_{secret}", hashed)


def split_token(token: str) -> tuple[str, str]:
    """``(key_id, secret)`` of a token; raises :class:`TokenFormatError` if malformed."""
    match = _TOKEN_RE.match(token.strip())
    if match is None:
        raise TokenFormatError("not an arena token (expected arena_<key id>_<secret>)")
    return match.group(1), match.group(2)


def verify_secret(secret: str, stored: TokenHash) -> bool:
    """Whether ``secret`` hashes to ``stored``; the comparison takes constant time."""
    candidate = _derive(stored.algorithm, secret, stored.salt)
    return hmac.compare_digest(candidate, stored.digest)


def burn_verification() -> None:
    """Spend the time of one verification (used when a key id is unknown, so response time
    does not reveal which key ids exist)."""
    _derive(ALGORITHM, "x" * 43, b"\0" * _SALT_BYTES)


def _derive(algorithm: str, secret: str, salt: bytes) -> bytes:
    name, *params = algorithm.split(":")
    if name != "scrypt" or len(params) != 3:
        raise ValueError(f"unsupported token hash algorithm {algorithm!r}")
    n, r, p = (int(v) for v in params)
    return hashlib.scrypt(secret.encode(), salt=salt, n=n, r=r, p=p, dklen=_DKLEN)
