"""A bot's own account of one move's search: :class:`SearchInfo` and its two written forms.

A bot may report, with a move, how deep it searched, how many nodes it visited, the score it
gave the position (from its own point of view: positive means the mover thinks it is ahead), its
principal variation (the moves it expects, in the game's notation, starting with the move it
played) and a short free text. Every part is optional. The record keeps it as said: a bot's
claim, never checked against the rules and never part of a verdict.

In the text form the parts are ``key=value`` data of the move's comment
(``depth=6 nodes=52011 score=35 pv=PLACE(0-1,%200-2,...);PLACE(...) text=went%20deep``): the
PV's moves are separated by ``;`` and, in ``pv`` and ``text``, a blank, ``%``, ``;``, braces,
``\\`` and ``|`` are written ``%XX`` (so every value stays one data word and reads back the same).
In the JSON form it is the move's ``search`` object with keys ``depth``, ``nodes``, ``score``,
``pv`` (a list of strings) and ``text``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

#: The data keys of a move comment that hold a :class:`SearchInfo`, in written order.
SEARCH_KEYS: tuple[str, ...] = ("depth", "nodes", "score", "pv", "text")

_QUOTED = re.compile(r"[\s%;{}\\|]")


@dataclass(frozen=True, slots=True)
class SearchInfo:
    """What a bot said about its search for one move (each part optional)."""

    depth: int | None = None
    nodes: int | None = None
    score: float | None = None
    pv: tuple[str, ...] = ()
    text: str = ""

    def __post_init__(self) -> None:
        for key in ("depth", "nodes"):
            value = getattr(self, key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"search {key} must be a whole number, got {value!r}")
            if value is not None and value < 0:
                raise ValueError(f"search {key} must not be negative, got {value!r}")
        score = self.score
        if score is not None:
            if isinstance(score, bool) or not isinstance(score, int | float):
                raise ValueError(f"search score must be a number, got {score!r}")
            if not math.isfinite(score):
                raise ValueError(f"search score must be finite, got {score!r}")
            object.__setattr__(self, "score", float(score))
        pv = tuple(self.pv)
        if any(not isinstance(m, str) or not m.strip() for m in pv):
            raise ValueError("search pv holds moves as non-empty strings")
        object.__setattr__(self, "pv", tuple(m.strip() for m in pv))
        object.__setattr__(self, "text", str(self.text).strip())

    @property
    def empty(self) -> bool:
        parts = (self.depth, self.nodes, self.score)
        return parts == (None, None, None) and not self.pv and not self.text

    def as_json(self) -> dict[str, Any]:
        """The JSON object (parts with no value left out)."""
        out: dict[str, Any] = {}
        for key in ("depth", "nodes", "score"):
            if (value := getattr(self, key)) is not None:
                out[key] = value
        if self.pv:
            out["pv"] = list(self.pv)
        if self.text:
            out["text"] = self.text
        return out

    def tokens(self) -> list[str]:
        """The comment data words, e.g. ``["depth=6", "score=35", "pv=J1a;T2b"]``."""
        words = []
        if self.depth is not None:
            words.append(f"depth={self.depth}")
        if self.nodes is not None:
            words.append(f"nodes={self.nodes}")
        if self.score is not None:
            words.append(f"score={_number(self.score)}")
        if self.pv:
            words.append("pv=" + ";".join(_quote(m) for m in self.pv))
        if self.text:
            words.append("text=" + _quote(self.text))
        return words


def _number(value: float) -> str:
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def _quote(text: str) -> str:
    return _QUOTED.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), text)


def search_from_words(words: Mapping[str, str]) -> SearchInfo:
    """A :class:`SearchInfo` from comment data (``{"depth": "6", "pv": "..."}``); a bad value
    is a ``ValueError`` naming the key."""
    parts: dict[str, Any] = {}
    for key in ("depth", "nodes"):
        if key in words:
            value = words[key]
            if not value.isascii() or not value.isdigit():
                raise ValueError(f"bad {key} value {value!r}: expected a whole number")
            parts[key] = int(value)
    if "score" in words:
        try:
            parts["score"] = float(words["score"])
        except ValueError:
            raise ValueError(f"bad score value {words['score']!r}: expected a number") from None
    if "pv" in words:
        parts["pv"] = tuple(unquote(m) for m in words["pv"].split(";") if m)
    if "text" in words:
        parts["text"] = unquote(words["text"])
    return SearchInfo(**parts)


def search_from_json(obj: object) -> SearchInfo:
    """A :class:`SearchInfo` from its JSON object; a bad part is a ``ValueError``."""
    if not isinstance(obj, Mapping):
        raise ValueError("expected an object with depth, nodes, score, pv, text")
    unknown = set(obj) - set(SEARCH_KEYS)
    if unknown:
        raise ValueError(f"unknown search key {sorted(unknown)[0]!r}")
    pv = obj.get("pv", [])
    if not isinstance(pv, list):
        raise ValueError("pv is a list of moves")
    text = obj.get("text", "")
    if not isinstance(text, str):
        raise ValueError("text is a string")
    return SearchInfo(obj.get("depth"), obj.get("nodes"), obj.get("score"), tuple(pv), text)


__all__ = ["SEARCH_KEYS", "SearchInfo", "search_from_json", "search_from_words"]
