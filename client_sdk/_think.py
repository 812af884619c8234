"""A bot's think record: what it searched for one move, sent with the move.

An :class:`~client_sdk.Agent` calls :meth:`~client_sdk.Agent.think` inside ``choose_move``;
a course-style agent sets ``self.think_record`` (a :class:`Think` or a ``dict`` with the same
keys) inside ``action()``. The SDK turns the PV into the game's notation by playing it out from
the position the move was asked in (a move it cannot play ends the conversion: the rest is sent
as the bot wrote it), trims what the referee would refuse, and sends it with the move. The
referee keeps it in the game's record and shows it on the game page (to the bot's owner and
instructors, and to everyone once the instructor publishes thinking); it never changes a
verdict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.game import State

#: What the referee keeps (``referee.server.bounds``): longer parts are cut here first.
MAX_PV_MOVES = 32
MAX_PV_MOVE_CHARS = 64
MAX_TEXT_CHARS = 200
MAX_DEPTH = 1000
MAX_SCORE = 1e9


@dataclass(frozen=True, slots=True)
class Think:
    """One move's think record; every part optional.

    ``depth`` plies searched, ``nodes`` positions visited, ``score`` the position's value from
    the mover's own point of view (positive: the mover thinks it is ahead; any units),
    ``pv`` the expected line starting with the move played (engine moves or their text),
    ``text`` a short note for people.
    """

    depth: int | None = None
    nodes: int | None = None
    score: float | None = None
    pv: Sequence[Any] = ()
    text: str = ""


def think_from(value: object) -> Think | None:
    """A :class:`Think` from what a bot left (a ``Think``, a ``dict``, or anything else:
    ``None``)."""
    if isinstance(value, Think):
        return value
    if isinstance(value, Mapping):
        keys = ("depth", "nodes", "score", "pv", "text")
        return Think(**{k: value[k] for k in keys if k in value})
    return None


@dataclass(frozen=True, slots=True)
class ThinkParts:
    """A think record ready to send: numbers in range, the PV as notation text."""

    depth: int | None
    nodes: int | None
    score: float | None
    pv: tuple[str, ...]
    text: str


def prepare(think: Think, state: State[Any]) -> ThinkParts | None:
    """``think`` as the referee takes it (``None`` if nothing in it can be sent).

    Never raises: a bot's think record must not cost it the move.
    """
    try:
        depth = _whole(think.depth, MAX_DEPTH)
        nodes = _whole(think.nodes, 2**63 - 1)
        score = None
        if isinstance(think.score, int | float) and not isinstance(think.score, bool):
            value = float(think.score)
            score = value if math.isfinite(value) and abs(value) <= MAX_SCORE else None
        pv = _notation(list(think.pv)[:MAX_PV_MOVES], state)
        text = " ".join(str(think.text).split())[:MAX_TEXT_CHARS]
    except Exception:
        return None
    if (depth, nodes, score, pv, text) == (None, None, None, (), ""):
        return None
    return ThinkParts(depth, nodes, score, pv, text)


def _whole(value: object, limit: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return min(value, limit)


def _notation(moves: list[Any], state: State[Any]) -> tuple[str, ...]:
    """Each PV move in the game's short notation, played out from ``state``; from the first
    move that cannot be played, the moves' own text."""
    line = state.copy()
    out: list[str] = []
    playing = True
    for item in moves:
        text = item if isinstance(item, str) else None
        if playing:
            try:
                move = _parse(line, item)
                text = line.san(move)
                line.apply(move)
            except Exception:
                playing = False
        if text is None:
            try:
                text = state.game.move_to_text(item)
            except Exception:
                text = str(item)
        text = " ".join(text.split())[:MAX_PV_MOVE_CHARS]
        if not text:
            break
        out.append(text)
    return tuple(out)


def _parse(state: State[Any], item: Any) -> Any:
    """An engine move from a PV item: an engine move, its text, or an object whose text is a
    move (a course ``PlaceAction``); ``apply`` then checks it is legal."""
    if not isinstance(item, str):
        try:
            state.check(item)
            return item
        except Exception:
            item = str(item)
    try:
        return state.parse_san(item)
    except Exception:
        return state.game.move_from_text(item)
