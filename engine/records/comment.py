"""Reading a move comment's data: ``{think=0.1s clock=9.5s depth=6 pv=... nodes_x=1 | text}``.

Shared by the text reader; the data words (measures, a bot's search, other ``key=value`` data)
come first and free text follows (after a lone ``|``, or from the first word that is not data).
"""

from __future__ import annotations

import re
from typing import Any

from engine.records.model import MEASURES
from engine.records.search import SEARCH_KEYS, search_from_words
from engine.records.tags import is_data_token, unescape

_MEASURE_UNITS = dict(MEASURES)


def comment_details(body: str) -> tuple[dict[str, Any], list[tuple[int, str]]]:
    """The :class:`~engine.records.model.RecordedMove` fields a comment body holds, and its
    problems as ``(offset in body, message)``."""
    details: dict[str, Any] = {}
    problems: list[tuple[int, str]] = []
    extra: list[tuple[str, str]] = []
    searched: dict[str, str] = {}
    text_from = len(body)
    for match in re.finditer(r"\S+", body):
        token = match.group()
        if token == "|":
            text_from = match.end()
            break
        if not is_data_token(token):
            text_from = match.start()
            break
        key, value = token.split("=", 1)
        if key in details or key in searched or any(k == key for k, _ in extra):
            problems.append((match.start(), f"comment data {key} given twice"))
        elif key in SEARCH_KEYS:
            searched[key] = value
        elif key in _MEASURE_UNITS:
            unit = _MEASURE_UNITS[key]
            number = parse_measure(value, unit)
            if number is None:
                message = f"bad {key} value {value!r}: expected e.g. 0.5{unit}"
                problems.append((match.start(), message))
            else:
                details[key] = number
        else:
            extra.append((key, value))
    if extra:
        details["extra"] = tuple(extra)
    if searched:
        try:
            details["search"] = search_from_words(searched)
        except ValueError as exc:
            problems.append((0, str(exc)))
    free = unescape(body[text_from:]).strip()
    if free:
        details["comment"] = free
    return details, problems


def parse_measure(value: str, unit: str) -> float | None:
    """A measure's number (its unit suffix optional); ``None`` if it is not a finite number."""
    if value.endswith(unit):
        value = value[: -len(unit)]
    try:
        number = float(value)
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None
