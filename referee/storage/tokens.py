"""API tokens: generated here, shown to their owner once, stored only as a keyed hash.

A token reads ``arena_<key id>_<secret>``. The key id is public and indexes the stored row
(a keyed hash cannot be looked up by value); the secret is 256 random bits and only its
HMAC-SHA-256 under the server's token key (:mod:`referee.storage.secret`) is kept.
Verification recomputes the HMAC and compares in constant time.

Why a keyed fast hash and not a password hash: the secret is 256 random bits, so nobody can
guess it, offline or online; a slow hash (scrypt) protected nothing and made every login cost
tens of milliseconds and 16 MiB, which let a flood of wrong tokens starve valid logins. The
HMAC key lives outside the database, so a leaked database alone does not even allow checking
a candidate token.

The hash's parameters are stored with every token (``algorithm``): ``hmac-sha256:<key
fingerprint>`` (a token hashed under another key is recognised as such, not as a wrong
secret), or ``scrypt:N:r:p`` for a token issued before the change, which still verifies
and is re-hashed with the HMAC on its next successful use (see
:meth:`~referee.storage.players.PlayerRepository.check_token`).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from referee.errors import RefereeError

PREFIX = "arena"
_KEY_ID_BYTES = 8
_SECRET_BYTES = 32

#: The stored ``algorithm`` of an HMAC hash starts with this, then ``:<key fingerprint>``.
HMAC_ALGORITHM = "hmac-sha256"
#: The legacy scrypt parameters (tokens issued before the HMAC; verified, then re-hashed).
_SCRYPT_N = 2**14
_SCRYPT_R = 8
_SCRYPT_P = 1
_SCRYPT_DKLEN = 32
_SCRYPT_SALT_BYTES = 16
LEGACY_ALGORITHM = f"scrypt:{_SCRYPT_N}:{_SCRYPT_R}:{_SCRYPT_P}"

_TOKEN_RE = re.compile(rf"^{PREFIX}_([0-9a-f]{{{2 * _KEY_ID_BYTES}}})_([A-Za-z0-9_-]{{20,200}})$")
_KEY_ID_RE = re.compile(rf"^{PREFIX}_([0-9a-f]{{{2 * _KEY_ID_BYTES}}})_")


class TokenFormatError(RefereeError, ValueError):
    """A string that is not shaped like a token at all."""


class WrongTokenKey(RefereeError, ValueError):
    """A token hashed under another server token key than the one in use (the key file or
    ``ARENA_TOKEN_SECRET`` changed): no secret can verify against it."""


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


def key_fingerprint(key: bytes) -> str:
    """A short public name for a token key (stored with each hash; reveals nothing of it)."""
    return hashlib.sha256(b"arena token key fingerprint\0" + key).hexdigest()[:16]


def hmac_algorithm(key: bytes) -> str:
    """The ``algorithm`` stored with a hash made under ``key``."""
    return f"{HMAC_ALGORITHM}:{key_fingerprint(key)}"


def hash_secret(key_id: str, secret: str, key: bytes) -> TokenHash:
    """The keyed hash of one token (its key id is bound in, so a row cannot be moved)."""
    digest = hmac.new(key, f"{key_id}:{secret}".encode(), hashlib.sha256).digest()
    return TokenHash(key_id, hmac_algorithm(key), b"", digest)


def generate_token(key: bytes) -> NewToken:
    """A new random token and its keyed hash."""
    key_id = secrets.token_hex(_KEY_ID_BYTES)
    secret = secrets.token_urlsafe(_SECRET_BYTES)
    return NewToken(f"{PREFIX}_{key_id}_{secret}", hash_secret(key_id, secret, key))


def split_token(token: str) -> tuple[str, str]:
    """``(key_id, secret)`` of a token; raises :class:`TokenFormatError` if malformed."""
    match = _TOKEN_RE.match(token.strip())
    if match is None:
        raise TokenFormatError("not an arena token (expected arena_<key id>_<secret>)")
    return match.group(1), match.group(2)


def public_key_id(token: str) -> str:
    """The key id of anything that starts like a token (``""`` if none): what the server
    throttles failed attempts by, even when the rest of the token is malformed."""
    match = _KEY_ID_RE.match(token.strip()[:64])
    return match.group(1) if match else ""


def is_legacy(stored: TokenHash) -> bool:
    """Whether ``stored`` is an old scrypt hash (to be replaced by the HMAC on use)."""
    return stored.algorithm.startswith("scrypt:")


def verify_secret(secret: str, stored: TokenHash, key: bytes) -> bool:
    """Whether ``secret`` is the token's secret; the comparison takes constant time.

    Raises :class:`WrongTokenKey` for an HMAC hash made under another key."""
    if is_legacy(stored):
        candidate = _scrypt(stored.algorithm, secret, stored.salt)
    elif stored.algorithm == hmac_algorithm(key):
        candidate = hash_secret(stored.key_id, secret, key).digest
    elif stored.algorithm.startswith(HMAC_ALGORITHM + ":"):
        raise WrongTokenKey(
            f"token {stored.key_id} was hashed under token key {stored.algorithm.split(':')[1]}, "
            f"but the server's key is {key_fingerprint(key)}"
        )
    else:
        raise ValueError(f"unsupported token hash algorithm {stored.algorithm!r}")
    return hmac.compare_digest(candidate, stored.digest)


def burn_verification(key: bytes) -> None:
    """Spend the time of one verification (used when a key id is unknown, so response time
    does not reveal which key ids exist)."""
    hash_secret("0" * 2 * _KEY_ID_BYTES, "x" * 43, key)


def legacy_hash(key_id: str, secret: str) -> TokenHash:
    """The scrypt hash tokens were stored as before the HMAC (for migrations and tests)."""
    salt = secrets.token_bytes(_SCRYPT_SALT_BYTES)
    return TokenHash(key_id, LEGACY_ALGORITHM, salt, _scrypt(LEGACY_ALGORITHM, secret, salt))


def _scrypt(algorithm: str, secret: str, salt: bytes) -> bytes:
    name, *params = algorithm.split(":")
    if name != "scrypt" or len(params) != 3:
        raise ValueError(f"unsupported token hash algorithm {algorithm!r}")
    n, r, p = (int(v) for v in params)
    return hashlib.scrypt(secret.encode(), salt=salt, n=n, r=r, p=p, dklen=_SCRYPT_DKLEN)
