"""Lessons files: positions a bot got wrong, with the moves that were better (docs/records.md).

A lessons file is JSON Lines: a header object (``format``, ``version``, the bot, the limits a
test runs under) on its first line, then one :class:`Lesson` a line. Blank lines and lines
starting with ``#`` are ignored, so a person can comment a file and add positions by hand.
Moves are in the game's short notation (``State.san``), as in game records. Pure: strings in,
strings out; :func:`read_lessons` raises :class:`~engine.errors.RecordError` with every
problem found.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.errors import EngineError, RecordError, RecordIssue
from engine.game import State
from engine.registry import load_game

FORMAT = "tetromino-lessons"
VERSION = 1
#: Kinds of mistake a lesson may name (a hand-written lesson may use any other word too).
KINDS = (
    "missed_win",
    "walked_into_loss",
    "gave_room",
    "lost_room",
    "holes",
    "stack",
    "easy_piece",
    "positional",
    "own",
)


@dataclass(frozen=True, slots=True)
class Limits:
    """What a test gives the bot per position: seconds for the move (0: the game's clock,
    ``game_time_s``), and memory in megabytes (0: none)."""

    game_time_s: float = 180.0
    move_time_s: float = 0.0
    memory_mb: float = 250.0


@dataclass(frozen=True, slots=True)
class Lesson:
    """One position and what the reference search thinks of it.

    ``history``: the moves from the game's standard start to ``position`` (empty: the position
    alone, e.g. one a person added); ``seat``: the seat to move; ``played``: the move the bot
    played (``None`` for an added position); ``good``: the moves that solve the lesson with
    their scores, best first; ``ply``: the ply of the move in its game (1-based).
    """

    game: str
    position: str
    seat: int
    good: tuple[tuple[str, float], ...]
    params: tuple[tuple[str, int], ...] = ()
    history: tuple[str, ...] = ()
    played: str | None = None
    played_score: float | None = None
    depth: int = 0
    nodes: int = 0
    glyph: str | None = None
    kind: str = "own"
    sentence: str = ""
    bot: str = ""
    version: str = ""
    game_id: str = ""
    ply: int = 0
    clock_s: float | None = None

    @property
    def best_score(self) -> float | None:
        return self.good[0][1] if self.good else None

    @property
    def key(self) -> tuple[str, str, str]:
        """What makes two lessons the same position for the same question."""
        return (self.game, self.position, self.played or "")


@dataclass(frozen=True, slots=True)
class LessonsFile:
    """A header and its lessons."""

    lessons: tuple[Lesson, ...] = ()
    bot: str = ""
    limits: Limits = field(default_factory=Limits)
    comment: str = ""


def write_lessons(book: LessonsFile) -> str:
    """The file's text: the header line, then one lesson a line."""
    header: dict[str, Any] = {"format": FORMAT, "version": VERSION, "bot": book.bot}
    header["limits"] = {
        "game_time_s": book.limits.game_time_s,
        "move_time_s": book.limits.move_time_s,
        "memory_mb": book.limits.memory_mb,
    }
    if book.comment:
        header["comment"] = book.comment
    lines = [_dumps(header)]
    lines += [_dumps(lesson_to_json(lesson)) for lesson in book.lessons]
    return "\n".join(lines) + "\n"


def lesson_to_json(lesson: Lesson) -> dict[str, Any]:
    """One lesson as a JSON object (keys with default values left out, but the essentials)."""
    out: dict[str, Any] = {"game": lesson.game}
    if lesson.params:
        out["params"] = dict(lesson.params)
    out["position"] = lesson.position
    out["seat"] = lesson.seat
    for key in ("bot", "version", "game_id", "ply", "played", "played_score", "glyph", "kind"):
        _put(out, key, getattr(lesson, key), always=key == "kind")
    out["good"] = [{"move": move, "score": score} for move, score in lesson.good]
    for key in ("depth", "nodes", "clock_s", "sentence"):
        _put(out, key, getattr(lesson, key))
    if lesson.history:
        out["history"] = list(lesson.history)
    return out


def _put(out: dict[str, Any], key: str, value: object, *, always: bool = False) -> None:
    """Set ``key`` unless its value is the default (``None``, empty text, a whole 0)."""
    default = value is None or value == "" or (isinstance(value, int) and value == 0)
    if always or not default:
        out[key] = value


def read_lessons(text: str, *, verify: bool = True) -> LessonsFile:
    """A lessons file from its text; ``RecordError`` with every problem (line, message).
    ``verify``: also check each position and its moves against the game's rules."""
    issues: list[RecordIssue] = []
    header: Mapping[str, Any] | None = None
    lessons: list[Lesson] = []
    # Only "\n" ends a line: JSON text may hold other line separators (U+2028, U+0085).
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            issues.append(RecordIssue(number, 1, f"not JSON: {exc}"))
            continue
        if not isinstance(data, dict):
            issues.append(RecordIssue(number, 1, "expected a JSON object"))
        elif header is None:
            header = data
            issues += [RecordIssue(number, 1, m) for m in _header_problems(data)]
        else:
            try:
                lesson = lesson_from_json(data)
                if verify:
                    check_lesson(lesson)
                lessons.append(lesson)
            except (EngineError, ValueError, TypeError, KeyError) as exc:
                issues.append(RecordIssue(number, 1, _one_line(exc)))
    if header is None:
        issues.append(RecordIssue(1, 1, f"no header line ({FORMAT!r} version {VERSION})"))
    if issues:
        raise RecordError(issues)
    assert header is not None
    return LessonsFile(
        tuple(lessons),
        str(header.get("bot", "")),
        _limits(header.get("limits") or {}),
        str(header.get("comment", "")),
    )


def _header_problems(data: Mapping[str, Any]) -> list[str]:
    if data.get("format") != FORMAT:
        return [f"the first object is not a lessons header (format {FORMAT!r})"]
    if data.get("version") != VERSION:
        return [f"lessons version {data.get('version')!r} is not {VERSION}: update the SDK"]
    try:
        _limits(data.get("limits") or {})
    except (TypeError, ValueError) as exc:
        return [f"bad limits: {exc}"]
    return []


def _limits(data: Any) -> Limits:
    if not isinstance(data, Mapping):
        raise TypeError("limits must be an object")
    values = {
        k: _number(data[k], k) for k in ("game_time_s", "move_time_s", "memory_mb") if k in data
    }
    for key, value in values.items():
        if value < 0:
            raise ValueError(f"{key} must be >= 0")
    return Limits(**values)


def lesson_from_json(data: Mapping[str, Any]) -> Lesson:
    """One lesson from its JSON object; ``ValueError``/``TypeError``/``KeyError`` saying why."""
    for key in ("game", "position", "seat", "good"):
        if key not in data:
            raise KeyError(f"a lesson needs {key!r}")
    good = data["good"]
    if not isinstance(good, list) or not good:
        raise ValueError("'good' must list at least one move")
    params = data.get("params") or {}
    if not isinstance(params, Mapping):
        raise TypeError("'params' must be an object")
    history = data.get("history") or []
    if not isinstance(history, list):
        raise TypeError("'history' must be a list of moves")
    seat = _whole(data["seat"], "seat")
    if seat not in (0, 1):
        raise ValueError("'seat' must be 0 or 1")
    score = data.get("played_score")
    clock = data.get("clock_s")
    return Lesson(
        game=_text(data["game"], "game"),
        position=_text(data["position"], "position"),
        seat=seat,
        good=tuple((_text(g["move"], "move"), _number(g["score"], "score")) for g in good),
        params=tuple((str(k), _whole(v, "params")) for k, v in params.items()),
        history=tuple(_text(m, "history") for m in history),
        played=None if data.get("played") is None else _text(data["played"], "played"),
        played_score=None if score is None else _number(score, "played_score"),
        depth=_whole(data.get("depth", 0), "depth"),
        nodes=_whole(data.get("nodes", 0), "nodes"),
        glyph=None if data.get("glyph") is None else _text(data["glyph"], "glyph"),
        kind=_text(data.get("kind", "own"), "kind"),
        sentence=_text(data.get("sentence", ""), "sentence"),
        bot=_text(data.get("bot", ""), "bot"),
        version=_text(data.get("version", ""), "version"),
        game_id=_text(data.get("game_id", ""), "game_id"),
        ply=_whole(data.get("ply", 0), "ply"),
        clock_s=None if clock is None else _number(clock, "clock_s"),
    )


def lesson_state(lesson: Lesson) -> State[Any]:
    """The lesson's position; ``EngineError``/``ValueError`` when it is not one of its game."""
    return load_game(lesson.game, **dict(lesson.params)).state_from_string(lesson.position)


def check_lesson(lesson: Lesson) -> None:
    """Raise ``ValueError`` (or an ``EngineError``) unless the position is its game's, the
    seat is to move there, the history leads to it and every move is legal in it."""
    try:
        game = load_game(lesson.game, **dict(lesson.params))
    except TypeError as exc:
        raise ValueError(f"bad params for {lesson.game}: {exc}") from None
    state = game.state_from_string(lesson.position)
    if state.is_over():
        raise ValueError("the position is already over: there is no move to find")
    if state.to_move != lesson.seat:
        raise ValueError(f"seat {lesson.seat} is not to move in the position")
    if lesson.history:
        walked = game.new_state()
        for ply, move in enumerate(lesson.history, 1):
            try:
                walked.apply(walked.parse_san(move))
            except EngineError as exc:
                raise ValueError(f"history move {ply} ({move}): {_one_line(exc)}") from None
        if walked.to_string() != state.to_string():
            raise ValueError("the history does not lead to the position")
    moves = [m for m, _ in lesson.good] + ([lesson.played] if lesson.played else [])
    for move in moves:
        try:
            state.parse_san(move)
        except EngineError as exc:
            raise ValueError(f"move {move}: {_one_line(exc)}") from None


def solves(state: State[Any], lesson: Lesson, move_text: str) -> bool:
    """Whether the move (long form) is one of the lesson's good moves in ``state``."""
    try:
        move = state.game.move_from_text(move_text)
        san = state.san(move)
    except (EngineError, ValueError):
        return False
    return any(_same(state, san, good) for good, _ in lesson.good)


def _same(state: State[Any], san: str, good: str) -> bool:
    if san == good:
        return True
    try:
        return state.san(state.parse_san(good)) == san
    except EngineError:
        return False


def _dumps(data: Mapping[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(", ", ": "))


def _one_line(exc: BaseException) -> str:
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    return " ".join(text.split())


def _text(value: object, key: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{key!r} must be text")
    return value


def _whole(value: object, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{key!r} must be a whole number")
    return value


def _number(value: object, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TypeError(f"{key!r} must be a finite number")
    return float(value)


def dedupe(lessons: Sequence[Lesson]) -> list[Lesson]:
    """The lessons without repeats of the same position and move (the first kept)."""
    seen: set[tuple[str, str, str]] = set()
    kept = []
    for lesson in lessons:
        if lesson.key not in seen:
            seen.add(lesson.key)
            kept.append(lesson)
    return kept
