"""Checking a parsed record against the rules, shared by the text and the JSON readers.

Both readers first turn their input into a :class:`RawRecord` (strings with the place each
came from) and collect syntax problems; :func:`build_record` then loads the game, replays every
move, checks the result against the moves and either returns a :class:`GameRecord` or adds
every problem it finds to the issue list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.errors import (
    AmbiguousMoveError,
    EngineError,
    IllegalMoveError,
    NotationError,
    RecordIssue,
    UnknownGameError,
)
from engine.game import Game, State
from engine.outcome import Termination
from engine.records.model import RESULTS, GameRecord, RecordedMove
from engine.records.tags import KNOWN_TAGS, parse_params, seat_tag
from engine.registry import load_game

_ENGINE_TERMINATIONS = frozenset(t.value for t in Termination)


@dataclass(frozen=True, slots=True)
class Where:
    """A place in the input: 1-based line and column (0, 0 when there is none) and a label."""

    line: int
    column: int
    label: str = ""

    def shifted(self, columns: int) -> Where:
        return Where(self.line, self.column + columns, self.label)

    def issue(self, message: str) -> RecordIssue:
        return RecordIssue(
            self.line, self.column, f"{self.label}: {message}" if self.label else message
        )


@dataclass(slots=True)
class RawTag:
    name: str
    value: str
    where: Where
    #: Where the value starts (after the opening quote).
    value_where: Where


@dataclass(slots=True)
class RawMove:
    text: str
    where: Where
    annotation: str | None = None
    #: Measurements, extra data and free text, already checked by the reader.
    details: dict[str, Any] = field(default_factory=dict)
    #: The move number written before the move, if any: (number, continues_black, where).
    number: tuple[int, bool, Where] | None = None


@dataclass(slots=True)
class RawRecord:
    start: Where
    tags: list[RawTag] = field(default_factory=list)
    moves: list[RawMove] = field(default_factory=list)
    comment: str = ""
    #: The result written after the moves, if any.
    result: tuple[str, Where] | None = None


def build_record(
    raw: RawRecord, issues: list[RecordIssue], verify: bool = True
) -> GameRecord | None:
    """Turn ``raw`` into a record, appending every problem to ``issues``.

    Returns ``None`` when this record had problems (``issues`` then says which). With
    ``verify``, every move is replayed and stored in canonical short notation.
    """
    first_issue = len(issues)
    tags = _tags_once(raw, issues)
    game = _load(raw, tags, issues)
    result = _result(raw, tags, issues)
    setup = _setup(tags, issues)
    termination = tags["Termination"].value if "Termination" in tags else None
    moves = _replay(raw, game, tags, setup, result, termination, issues, verify)
    if len(issues) > first_issue or game is None:
        return None
    player_tags = tuple(seat_tag(s) for s in game.seat_names) if game.seat_names else ()
    players = tuple(tags[name].value if name in tags else "?" for name in player_tags)

    def text(name: str, default: str) -> str:
        return tags[name].value if name in tags else default

    def optional(name: str) -> str | None:
        return tags[name].value if name in tags else None

    known = set(KNOWN_TAGS) | set(player_tags)
    return GameRecord(
        game=game.name,
        params=_params_as_written(tags),
        players=(players[0], players[1]),
        event=text("Event", "?"),
        site=text("Site", "?"),
        date=text("Date", "????.??.??"),
        round=text("Round", "?"),
        time_control=optional("TimeControl"),
        setup=setup,
        result=result,
        termination=termination,
        reason=optional("Reason"),
        moves=tuple(moves),
        extra_tags=tuple((t.name, t.value) for t in raw.tags if t.name not in known),
        comment=raw.comment,
    )


def _tags_once(raw: RawRecord, issues: list[RecordIssue]) -> dict[str, RawTag]:
    """The record's tags by name; a tag given twice is an issue, and its first value counts."""
    tags: dict[str, RawTag] = {}
    for tag in raw.tags:
        if tag.name in tags:
            issues.append(tag.where.issue(f"tag {tag.name} given twice"))
        else:
            tags[tag.name] = tag
    return tags


def _result(raw: RawRecord, tags: dict[str, RawTag], issues: list[RecordIssue]) -> str:
    """The result: the Result tag's, else the one written after the moves, else ``*``."""
    result = "*"
    if "Result" in tags:
        tag = tags["Result"]
        if tag.value in RESULTS:
            result = tag.value
        else:
            issues.append(tag.value_where.issue(f"Result must be one of {', '.join(RESULTS)}"))
    elif raw.result is not None:
        result = raw.result[0]
    if raw.result is not None and "Result" in tags and raw.result[0] != tags["Result"].value:
        issues.append(
            raw.result[1].issue(
                f"result {raw.result[0]} after the moves disagrees with Result tag "
                f"{tags['Result'].value}"
            )
        )
    return result


def _setup(tags: dict[str, RawTag], issues: list[RecordIssue]) -> str | None:
    """The starting position of the Position tag, checked against SetUp."""
    setup: str | None = None
    if "Position" in tags:
        setup = tags["Position"].value
    elif "SetUp" in tags and tags["SetUp"].value == "1":
        issues.append(tags["SetUp"].where.issue("SetUp is 1 but there is no Position tag"))
    if "SetUp" in tags and tags["SetUp"].value not in ("0", "1"):
        issues.append(tags["SetUp"].value_where.issue("SetUp must be 0 or 1"))
    return setup


def _params_as_written(tags: dict[str, RawTag]) -> dict[str, int]:
    if "GameParams" not in tags:
        return {}
    return parse_params(tags["GameParams"].value)[0]


def _load(raw: RawRecord, tags: dict[str, RawTag], issues: list[RecordIssue]) -> Game[Any] | None:
    params: dict[str, int] = {}
    params_ok = True
    if "GameParams" in tags:
        tag = tags["GameParams"]
        params, problems = parse_params(tag.value)
        for offset, message in problems:
            issues.append(tag.value_where.shifted(offset).issue(message))
        params_ok = not problems
    if "Game" not in tags:
        issues.append(raw.start.issue("missing Game tag (which game is this?)"))
        return None
    tag = tags["Game"]
    try:
        game = load_game(tag.value, **params)
    except UnknownGameError as exc:
        issues.append(tag.value_where.issue(str(exc)))
        return None
    except (TypeError, ValueError) as exc:
        if params_ok:
            where = tags["GameParams"].value_where if "GameParams" in tags else tag.value_where
            issues.append(where.issue(f"bad game parameters for {tag.value}: {exc}"))
        return None
    if tag.value != game.name:
        issues.append(tag.value_where.issue(f"game name must be written {game.name!r}"))
    return game


def _replay(
    raw: RawRecord,
    game: Game[Any] | None,
    tags: dict[str, RawTag],
    setup: str | None,
    result: str,
    termination: str | None,
    issues: list[RecordIssue],
    verify: bool,
) -> list[RecordedMove]:
    state: State[Any] | None = None
    if game is not None:
        try:
            state = game.state_from_string(setup) if setup is not None else game.new_state()
        except EngineError as exc:
            issues.append(tags["Position"].value_where.issue(f"bad position: {exc}"))
    first_seat = state.to_move if state is not None else 0

    moves: list[RecordedMove] = []
    live = state if verify else None
    for ply, raw_move in enumerate(raw.moves, start=1):
        if raw_move.number is not None:
            number, continues, where = raw_move.number
            expected = (ply - 1 + first_seat) // 2 + 1
            if number != expected:
                issues.append(where.issue(f"move number {number}, expected {expected}"))
            elif continues and (ply - 1 + first_seat) % 2 == 0:
                issues.append(
                    where.issue(f"{number}... but the move is the first of number {number}")
                )
        san = raw_move.text
        if live is not None:
            san_or_none = _play(live, raw_move, ply, issues)
            if san_or_none is None:
                live = None  # the position is unknown from here on: stop replaying
            else:
                san = san_or_none
        try:
            moves.append(RecordedMove(san, raw_move.annotation, **raw_move.details))
        except ValueError as exc:
            issues.append(raw_move.where.issue(str(exc)))

    if live is not None:
        _check_result(live, tags, raw, result, termination, issues)
    return moves


def _play(state: State[Any], raw_move: RawMove, ply: int, issues: list[RecordIssue]) -> str | None:
    where = raw_move.where
    try:
        move = state.parse_san(raw_move.text)
        san = state.san(move)
        state.apply(move)
    except NotationError as exc:
        at = where.shifted(exc.column) if exc.column is not None else where
        issues.append(at.issue(f"bad move syntax at ply {ply}: {exc.message}"))
        return None
    except IllegalMoveError as exc:
        issues.append(where.issue(f"illegal move at ply {ply} ({raw_move.text}): {exc.detail}"))
        return None
    except AmbiguousMoveError as exc:
        issues.append(
            where.issue(
                f"ambiguous move at ply {ply} ({raw_move.text}): could be "
                + ", ".join(exc.candidates)
            )
        )
        return None
    return san


def _check_result(
    state: State[Any],
    tags: dict[str, RawTag],
    raw: RawRecord,
    result: str,
    termination: str | None,
    issues: list[RecordIssue],
) -> None:
    outcome = state.outcome()
    result_where = (
        tags["Result"].value_where
        if "Result" in tags
        else raw.result[1]
        if raw.result is not None
        else raw.start
    )
    if outcome is not None:
        if result != outcome.result():
            issues.append(
                result_where.issue(
                    f"Result {result} disagrees with the moves: the game ended "
                    f"({outcome.termination.value}) with {outcome.result()}"
                )
            )
        if termination is not None and termination != outcome.termination.value:
            issues.append(
                tags["Termination"].value_where.issue(
                    f"Termination {termination} disagrees with the moves: the game ended "
                    f"by {outcome.termination.value}"
                )
            )
    elif termination in _ENGINE_TERMINATIONS:
        issues.append(
            tags["Termination"].value_where.issue(
                f"Termination {termination} but the game is not over after the moves"
            )
        )
