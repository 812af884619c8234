"""Tag pairs: their canonical order, and the small text forms some tag values use."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from engine.records.model import MEASURES, GameRecord, RecordedMove
from engine.registry import load_game

#: Tags with a dedicated :class:`GameRecord` field (besides the two player tags).
KNOWN_TAGS: tuple[str, ...] = (
    "Event",
    "Site",
    "Date",
    "Round",
    "Game",
    "GameParams",
    "TimeControl",
    "SetUp",
    "Position",
    "Result",
    "Termination",
    "Reason",
)

TAG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_PARAM = re.compile(r"([a-z_][a-z0-9_]*)=(-?\d+)\Z")
_DATA_TOKEN = re.compile(r"[a-z][a-z0-9_]*=[^\s{}\\|]+\Z")


def seat_tag(seat_name: str) -> str:
    """The tag naming the player of a seat: ``RED`` -> ``Red``, ``CHOOSER`` -> ``Chooser``."""
    return seat_name.capitalize()


def seat_names_of(record: GameRecord) -> tuple[str, str]:
    """The seat names of the record's game (loads the game from the registry)."""
    return load_game(record.game, **record.params).seat_names


def record_tags(
    record: GameRecord, seat_names: Sequence[str] | None = None
) -> list[tuple[str, str]]:
    """The record's tag pairs in canonical order.

    Seven-tag-roster first (Event, Site, Date, Round, the two players by seat name), then Game,
    GameParams, TimeControl, SetUp/Position, Result, Termination, Reason, then extra tags.
    """
    seats = tuple(seat_names) if seat_names is not None else seat_names_of(record)
    tags: list[tuple[str, str]] = [
        ("Event", record.event),
        ("Site", record.site),
        ("Date", record.date),
        ("Round", record.round),
        (seat_tag(seats[0]), record.players[0]),
        (seat_tag(seats[1]), record.players[1]),
        ("Game", record.game),
    ]
    if record.params:
        tags.append(("GameParams", format_params(record.params)))
    if record.time_control is not None:
        tags.append(("TimeControl", record.time_control))
    if record.setup is not None:
        tags.append(("SetUp", "1"))
        tags.append(("Position", record.setup))
    tags.append(("Result", record.result))
    if record.termination is not None:
        tags.append(("Termination", record.termination))
    if record.reason is not None:
        tags.append(("Reason", record.reason))
    tags.extend(record.extra_tags)
    return tags


def format_params(params: Mapping[str, int]) -> str:
    """``{"max_turns": 100, "max_rows": 40}`` -> ``max_turns=100 max_rows=40``."""
    return " ".join(f"{key}={value}" for key, value in params.items())


def parse_params(text: str) -> tuple[dict[str, int], list[tuple[int, str]]]:
    """Parse a GameParams value; returns the params and ``(offset, message)`` problems."""
    params: dict[str, int] = {}
    problems: list[tuple[int, str]] = []
    for match in re.finditer(r"\S+", text):
        item = match.group()
        found = _PARAM.match(item)
        if found is None:
            problems.append((match.start(), f"bad game parameter {item!r}: expected name=integer"))
        elif found.group(1) in params:
            problems.append((match.start(), f"game parameter {found.group(1)!r} given twice"))
        else:
            params[found.group(1)] = int(found.group(2))
    return params, problems


def format_number(value: float) -> str:
    """The shortest text that reads back as the same float (``0.123``, ``178.2``, ``1e-05``)."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def escape_comment(text: str) -> str:
    return text.replace("\\", "\\\\").replace("}", "\\}")


def unescape(text: str, controls: bool = False) -> str:
    """Undo backslash escapes: ``\\x`` becomes ``x``; with ``controls`` (tag values) ``\\n`` and
    ``\\r`` become a newline and a carriage return."""
    out: list[str] = []
    chars = iter(text)
    for char in chars:
        if char == "\\":
            nxt = next(chars, "")
            out.append({"n": "\n", "r": "\r"}.get(nxt, nxt) if controls else nxt)
        else:
            out.append(char)
    return "".join(out)


def escape_tag_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")


def comment_body(move: RecordedMove) -> str:
    """The inside of a move's ``{...}`` comment, e.g. ``think=0.1s clock=9.5s | good``."""
    data = [
        f"{key}={format_number(value)}{unit}"
        for key, unit in MEASURES
        if (value := getattr(move, key)) is not None
    ]
    if move.search is not None:
        data.extend(move.search.tokens())
    data.extend(f"{key}={value}" for key, value in move.extra)
    return join_comment(data, move.comment)


def join_comment(data: Sequence[str], text: str) -> str:
    """Data tokens then free text; a ``|`` separates them when the text could be taken for data."""
    escaped = escape_comment(text)
    first = escaped.split(maxsplit=1)[0] if escaped.strip() else ""
    needs_bar = bool(escaped) and (bool(data) or first == "|" or bool(_DATA_TOKEN.match(first)))
    parts = list(data)
    if needs_bar:
        parts.append("|")
    if escaped:
        parts.append(escaped)
    return " ".join(parts)


def is_data_token(token: str) -> bool:
    return bool(_DATA_TOKEN.match(token))
