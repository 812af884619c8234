"""Free text from a bot (a comment, a reason, an error report) made safe to keep for people."""

from __future__ import annotations

import unicodedata

from referee.text.names import HIDDEN, strip_escapes

#: Longest reason or note kept from a bot.
MAX_NOTE_CHARS = 200


def clean_note(text: str, max_chars: int = MAX_NOTE_CHARS) -> str:
    """Free text from a bot kept for people (a comment, a reason): terminal escape sequences
    removed, control, bidi and other invisible characters replaced by spaces, cut to
    ``max_chars``."""
    kept = strip_escapes(text[: max_chars * 2])
    return "".join(" " if unicodedata.category(c) in HIDDEN else c for c in kept)[:max_chars]


def clean_report(text: str, max_chars: int = 8000) -> str:
    """A bot's error report (e.g. a traceback) kept for people: its last ``max_chars``
    characters, line breaks kept, other control characters replaced by spaces."""
    return "\n".join(clean_note(line, 1000) for line in text[-max_chars:].splitlines())
