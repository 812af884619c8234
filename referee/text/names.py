"""Outside text: what a name may be, and how any text from outside is made safe to show.

Names are registered once and then printed everywhere (terminal tables, web pages, logs,
records), so they are held to a small character set: ASCII letters, digits and ``-_.``, at
most :data:`MAX_NAME_CHARS`, and for bots ``owner/name``. Nothing in such a name can clear a
terminal, forge colours, hide a link, reverse the text around it or break a table's row.
:mod:`referee.storage.names` refuses other names at registration.

Text that cannot be held to that set (a player's display name, a reason sentence quoting a
bot, a name stored before these rules) goes through :func:`display` wherever it is shown:
terminal escape sequences, control characters, bidirectional and other invisible format
characters are removed, runs of white space (newlines included) become one space, and the
length is capped. Text kept exactly as sent (a move in a think record's line, an uploaded
file's name) is refused instead when :func:`hidden_in` finds such a character in it.

This module imports nothing heavy: the CLI's every command, the server's handshake and the
storage layer all use it.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from pathlib import Path

#: A player's name, a bot's name (each half of ``owner/name``), a version.
MAX_NAME_CHARS = 64
#: A display name (and any other outside text shown in a table cell).
MAX_DISPLAY_CHARS = 80

_NAME = re.compile(r"[A-Za-z0-9._-]+")
_NOT_NAME = re.compile(r"[^A-Za-z0-9._-]+")
#: ESC-introduced sequences: CSI (``ESC [ ... final``), OSC/DCS/APC/PM/SOS strings (ended by
#: BEL or ``ESC \\``), and two-character escapes; also their 8-bit C1 forms.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]"
)
#: Unicode categories never shown: controls, format characters (bidi marks and overrides,
#: zero-width characters), line and paragraph separators, surrogates, private use, unassigned.
HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def name_problem(name: str, what: str, max_chars: int = MAX_NAME_CHARS) -> str | None:
    """Why ``name`` may not be registered as ``what`` (``None``: it may)."""
    if name and len(name) <= max_chars and _NAME.fullmatch(name) and name not in (".", ".."):
        return None
    shown = display(name, 40) if name else ""
    return (
        f"{what} {shown!r} is not allowed: use 1 to {max_chars} ASCII letters, digits, "
        "'-', '_' and '.'"
    )


#: What every module path of a bot shipped with the SDK starts with (examples, reference).
SHIPPED_PREFIX = "client_sdk."
#: A class defined at the top of a module (a shipped example's bot class).
_CLASS = re.compile(r"^class (\w+)\b", re.M)


def shipped_name_problem(name: str, what: str = "bot name") -> str | None:
    """Why ``name`` may not name a remote bot, an upload or any bot but a shipped one: it
    reads as a shipped bot's module path (``client_sdk.examples.greedy_bot``) or is the name a
    shipped bot goes by (``greedy_bot``, ``Level2``: :func:`shipped_bot_names`), which only
    the referee's own launch of that bot may use. An owner-prefixed name (``alice/greedy_bot``,
    ``alice/client_sdk...``) is the owner's and is allowed."""
    if name.lower().startswith(SHIPPED_PREFIX):
        return (
            f"{what} {display(name, 60)!r} is a shipped bot's module path: only the referee's "
            "own launch of that bot may use it; choose another name"
        )
    if name.lower() in shipped_bot_names():
        return (
            f"{what} {display(name, 60)!r} is the name of a bot shipped with the SDK: only "
            "that bot goes by it; choose another name"
        )
    return None


@functools.cache
def shipped_folder() -> Path | None:
    """The folder of the SDK's package (where the shipped bots live), found without importing
    it; ``None`` where it is not installed."""
    import importlib.util

    found = importlib.util.find_spec(SHIPPED_PREFIX.rstrip("."))
    folders = found.submodule_search_locations if found is not None else None
    return Path(folders[0]).resolve() if folders else None


@functools.cache
def shipped_bot_names() -> frozenset[str]:
    """The names the shipped example bots go by when the referee launches them (in lower
    case): each example module's and package's name, and each bot class an example module
    defines (``greedy_bot``, ``course_random``, ``Level1``). Read from the files, importing
    nothing."""
    folder = shipped_folder()
    if folder is None:
        return frozenset()
    names: set[str] = set()
    for path in (folder / "examples").iterdir():
        if path.is_dir() and (path / "__init__.py").is_file():
            names.add(path.name.lower())
        elif path.suffix == ".py" and path.stem != "__init__":
            names.add(path.stem.lower())
            text = path.read_text(encoding="utf-8", errors="replace")
            names |= {c.lower() for c in _CLASS.findall(text)}
    return frozenset(names)


def as_name(text: str, default: str = "anonymous") -> str:
    """``text`` made into an allowed name (a remote bot's Hello name, a module's label):
    white space and every other character outside the set become ``_``, cut to
    :data:`MAX_NAME_CHARS`; ``default`` when nothing is left."""
    cleaned = _NOT_NAME.sub("_", display(text, MAX_NAME_CHARS * 4).strip())
    cleaned = cleaned[:MAX_NAME_CHARS]
    if cleaned in ("", ".", "..") or not cleaned.strip("_"):
        return default
    return cleaned


def hidden_in(text: str) -> str | None:
    """The first character of ``text`` that is never shown, as ``U+XXXX`` (a control, a
    bidirectional override or mark, a zero-width or other format character...), ``None``
    when there is none: for text kept as sent (a move, a file name), which is refused rather
    than cleaned when it holds one."""
    for ch in text:
        if unicodedata.category(ch) in HIDDEN:
            return f"U+{ord(ch):04X}"
    return None


def strip_escapes(text: str) -> str:
    """``text`` without terminal escape sequences (CSI, OSC and the like)."""
    return _ESCAPES.sub("", text)


def display(text: str, max_chars: int = MAX_DISPLAY_CHARS) -> str:
    """``text`` safe to show on one line: escape sequences, control, bidi and other invisible
    characters removed, white space runs made one space, cut to ``max_chars`` (ending ``…``)."""
    text = strip_escapes(text[: max_chars * 8])
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in text
        if ch.isspace() or unicodedata.category(ch) not in HIDDEN
    )
    kept = " ".join(kept.split())
    if len(kept) > max_chars:
        kept = kept[: max_chars - 1] + "…"
    return kept
