"""The bounds of every field a client sends, in one place (docs/protocol.md lists them).

The server is reachable from the internet: every request field is checked here before it
reaches storage, the rating fit or a game. A value out of bounds raises :class:`BadField`
(a ``ValueError``), whose message starts with the field's name; the services turn it into
``INVALID_ARGUMENT`` (Arena, Submissions) or a fatal ``ERROR_CODE_BAD_MESSAGE`` (a Hello).
Values are refused rather than silently clamped, so a client never reads a shortened answer as
the whole one. Only a Move's comment is cut (it is free text kept for people, documented as
cut at :data:`MAX_COMMENT_CHARS`).
"""

from __future__ import annotations

import math
import re

from client_sdk.proto import referee_pb2 as pb
from client_sdk.protocol import MAX_ACTION_CHARS, action_problem
from referee.errors import RefereeError
from referee.match.seat import MAX_COMMENT_CHARS
from referee.match.thinking import (
    MAX_PV_MOVE_CHARS,
    MAX_PV_MOVES,
    MAX_THINK_CHARS_PER_GAME,
    MAX_THINK_CHARS_PER_MOVE,
    MAX_THINK_DEPTH,
    MAX_THINK_NODES,
    MAX_THINK_SCORE,
    MAX_THINK_TEXT_CHARS,
    think_record,
)
from referee.text.notes import MAX_NOTE_CHARS, clean_note, clean_report

__all__ = [
    "MAX_ACTION_CHARS",
    "MAX_COMMENT_CHARS",
    "MAX_NOTE_CHARS",
    "MAX_PV_MOVES",
    "MAX_PV_MOVE_CHARS",
    "MAX_THINK_CHARS_PER_GAME",
    "MAX_THINK_CHARS_PER_MOVE",
    "MAX_THINK_DEPTH",
    "MAX_THINK_NODES",
    "MAX_THINK_SCORE",
    "MAX_THINK_TEXT_CHARS",
    "action_problem",
    "clean_note",
    "clean_report",
    "think_record",
]

#: Database ids are signed 64-bit integers (SQLite INTEGER, PostgreSQL BIGINT).
MAX_ID = 2**63 - 1
#: A reference to a tournament, game, bot or ladder (a name, a uid or a decimal id).
MAX_REF_CHARS = 200
#: ``ListGames``: no limit means this many; more than :data:`MAX_LIST_LIMIT` is refused.
DEFAULT_LIST_LIMIT = 100
MAX_LIST_LIMIT = 1000
#: ``GetLeaderboard.anchor_rating``: a finite number of at most this size.
MAX_ANCHOR_RATING = 100_000.0

# -- Hello ------------------------------------------------------------------------------------
#: The bot's own name as sent; the name the referee uses is then cleaned and cut to 64
#: characters (see referee.text.names).
MAX_HELLO_NAME_CHARS = 256
MAX_HELLO_VERSION_CHARS = 64
#: Stored tokens are about 90 characters; anything much longer is not a token.
MAX_TOKEN_CHARS = 512
MAX_SDK_VERSION_CHARS = 200
MAX_SESSION_ID_CHARS = 64
#: ``games`` and ``wanted_games``: how many names, and how long each.
MAX_GAME_NAMES = 16
MAX_GAME_NAME_CHARS = 32
#: ``metadata``: entries, and the length of each key and value.
MAX_METADATA_ENTRIES = 32
MAX_METADATA_KEY_CHARS = 64
MAX_METADATA_VALUE_CHARS = 1024
#: ``max_games``: games one session may play at once.
MAX_GAMES_PER_SESSION = 64
#: A channel name: letters, digits, ``-_.``.
MAX_CHANNEL_CHARS = 64
#: A challenge names ``owner/name`` (or ``name`` on an open server).
MAX_CHALLENGE_CHARS = 256

# -- Move and other bot messages ----------------------------------------------------------------
# A move's text is refused above MAX_ACTION_CHARS; its comment is cut to MAX_COMMENT_CHARS
# (and control characters are removed); ``NotAMove.returned``/``expected``, a ChallengeAnswer's
# reason, a Goodbye's reason are cut to MAX_NOTE_CHARS. The match runner applies them
# (referee.match.seat, referee.text.notes); they are named here too so this module lists every
# bound.

# -- A move's think record: its bounds live with the code that applies them
# (referee.match.thinking) and are named above.

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CHANNEL = re.compile(r"[A-Za-z0-9._-]*")
#: An uploaded bot's name: no dots or slashes (they would read as a module or a path).
_SUBMIT_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class BadField(RefereeError, ValueError):
    """A request field out of bounds; the message names the field and says what is allowed."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field


def shown(text: str, limit: int = 40) -> str:
    """``text`` quoted for an error message, cut to ``limit`` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _length(value: str, field: str, max_chars: int) -> None:
    if len(value) > max_chars:
        raise BadField(field, f"{len(value)} characters, at most {max_chars} are allowed")


def bounded(value: str, field: str, max_chars: int) -> str:
    """``value`` if it has at most ``max_chars`` characters and no control character."""
    _length(value, field, max_chars)
    if _CONTROL.search(value):
        raise BadField(field, f"{shown(value)} contains a control character")
    return value


def _digits_up_to(limit: int) -> str:
    """A regular expression for the decimal numbers from 0 to ``limit`` (ASCII digits, no
    sign): any shorter number, or one of ``limit``'s length that is not above it."""
    top = str(limit)
    longest = [top] + [
        top[:i] + f"[0-{int(top[i]) - 1}]" + f"[0-9]{{{len(top) - i - 1}}}"
        for i in range(len(top))
        if top[i] != "0"
    ]
    return f"(?:[0-9]{{1,{len(top) - 1}}}|{'|'.join(longest)})"


#: A database id in a path or a query (ASCII digits, at most :data:`MAX_ID`): the web front's
#: routes match only these, so a number past the database's range is an unknown page (404).
ID_PATTERN = _digits_up_to(MAX_ID)
_ID = re.compile(ID_PATTERN)


def database_id(value: str) -> int | None:
    """``value`` as a database id (ASCII digits, at most :data:`MAX_ID`), else ``None``."""
    return int(value) if _ID.fullmatch(value) else None


def reference(value: str, field: str) -> int | str:
    """A name or a decimal id (ASCII digits only): the id as an ``int`` within the database's
    range, else the name, bounded."""
    bounded(value, field, MAX_REF_CHARS)
    if value.isascii() and value.isdigit():
        number = database_id(value)
        if number is None:
            raise BadField(field, f"id {shown(value)} is out of range (at most {MAX_ID})")
        return number
    return value


def page(limit: int, offset: int) -> tuple[int, int]:
    """``(limit, offset)`` of a listing: a limit of 0 means :data:`DEFAULT_LIST_LIMIT`."""
    if limit < 0 or limit > MAX_LIST_LIMIT:
        raise BadField("limit", f"{limit} is out of range (0 to {MAX_LIST_LIMIT}; 0: default)")
    if offset < 0:
        raise BadField("offset", f"{offset} is negative")
    return limit or DEFAULT_LIST_LIMIT, offset


def finite(value: float, field: str, magnitude: float) -> float:
    """``value`` if it is a finite number of at most ``magnitude`` either way."""
    if not math.isfinite(value) or abs(value) > magnitude:
        raise BadField(field, f"{value!r} is out of range (a finite number within ±{magnitude:g})")
    return value


def _names(values: list[str] | tuple[str, ...], field: str) -> None:
    if len(values) > MAX_GAME_NAMES:
        raise BadField(field, f"{len(values)} entries, at most {MAX_GAME_NAMES} are allowed")
    for value in values:
        bounded(value, field, MAX_GAME_NAME_CHARS)


def check_hello(hello: pb.Hello) -> None:
    """Refuse a Hello with a field out of bounds (:class:`BadField` naming it). Free text
    (the bot's name, its SDK version, metadata) is only bounded in length: it is cleaned where
    it is shown, and logs escape it."""
    _length(hello.bot_name, "Hello.bot_name", MAX_HELLO_NAME_CHARS)
    bounded(hello.bot_version, "Hello.bot_version", MAX_HELLO_VERSION_CHARS)
    _length(hello.token, "Hello.token", MAX_TOKEN_CHARS)
    _length(hello.sdk_version, "Hello.sdk_version", MAX_SDK_VERSION_CHARS)
    bounded(hello.resume_session_id, "Hello.resume_session_id", MAX_SESSION_ID_CHARS)
    _names(list(hello.games), "Hello.games")
    _names(list(hello.wanted_games), "Hello.wanted_games")
    if hello.max_games > MAX_GAMES_PER_SESSION:
        raise BadField(
            "Hello.max_games", f"{hello.max_games}, at most {MAX_GAMES_PER_SESSION} are allowed"
        )
    if len(hello.metadata) > MAX_METADATA_ENTRIES:
        raise BadField(
            "Hello.metadata",
            f"{len(hello.metadata)} entries, at most {MAX_METADATA_ENTRIES} are allowed",
        )
    for key, value in hello.metadata.items():
        bounded(key, "Hello.metadata key", MAX_METADATA_KEY_CHARS)
        _length(value, f"Hello.metadata[{shown(key)}]", MAX_METADATA_VALUE_CHARS)
    channel = bounded(hello.channel.strip(), "Hello.channel", MAX_CHANNEL_CHARS)
    if not _CHANNEL.fullmatch(channel):
        raise BadField("Hello.channel", f"{shown(channel)}: use letters, digits, '-', '_', '.'")
    bounded(hello.challenge, "Hello.challenge", MAX_CHALLENGE_CHARS)


def check_submit_name(name: str) -> None:
    """Refuse ``SubmitStart.bot_name`` unless it is empty (the default name) or a name."""
    name = name.strip()
    if name and not _SUBMIT_NAME.fullmatch(name):
        raise BadField(
            "SubmitStart.bot_name",
            f"{shown(name)}: use up to 64 letters, digits, '-' and '_' (no dots)",
        )


def code_name(code: int) -> str:
    """An ``ErrorCode``'s name; a number no version of the protocol defines is shown as one."""
    try:
        return pb.ErrorCode.Name(code)  # type: ignore[arg-type]
    except ValueError:
        return f"error code {code}"
