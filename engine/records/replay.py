"""From records to positions and back: replay to any ply; build a record from play."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from engine.errors import (
    AmbiguousMoveError,
    EngineError,
    IllegalMoveError,
    NotationError,
    RecordError,
    RecordIssue,
)
from engine.game import Game, State
from engine.records.model import GameRecord, RecordedMove
from engine.records.search import SearchInfo
from engine.registry import load_game


def record_game(record: GameRecord) -> Game[Any]:
    """The game a record was played under (its name and parameters)."""
    return load_game(record.game, **record.params)


def initial_state(record: GameRecord) -> State[Any]:
    """The position before the record's first move (its set-up position, or the start)."""
    game = record_game(record)
    if record.setup is None:
        return game.new_state()
    try:
        return game.state_from_string(record.setup)
    except EngineError as exc:
        raise RecordError([RecordIssue(0, 0, f"bad set-up position: {exc}")]) from exc


def replay(record: GameRecord, ply: int | None = None) -> State[Any]:
    """The position after the first ``ply`` moves (all of them by default), every move checked.

    ``ply`` may be negative, counting from the end as in Python slicing. Raises
    :class:`RecordError` (line and column 0, the ply in the message) if a move does not parse
    or is illegal, and ``IndexError`` if ``ply`` is out of range.
    """
    total = len(record.moves)
    target = total if ply is None else ply + total if ply < 0 else ply
    if not 0 <= target <= total:
        raise IndexError(f"ply {ply} is out of range: the record has {total} moves")
    state = initial_state(record)
    for index in range(target):
        apply_recorded(state, record.moves[index], index + 1)
    return state


def positions(record: GameRecord) -> Iterator[State[Any]]:
    """The initial position, then the position after each move (independent copies)."""
    state = initial_state(record)
    yield state.copy()
    for index, move in enumerate(record.moves):
        apply_recorded(state, move, index + 1)
        yield state.copy()


def apply_recorded(state: State[Any], move: RecordedMove, ply: int) -> Any:
    """Resolve and play one recorded move; returns the engine move. Raises :class:`RecordError`."""
    try:
        engine_move = state.parse_san(move.san)
        state.apply(engine_move)
    except (NotationError, IllegalMoveError, AmbiguousMoveError) as exc:
        raise RecordError([RecordIssue(0, 0, f"ply {ply} ({move.san}): {exc}")]) from exc
    return engine_move


def verify_record(record: GameRecord) -> GameRecord:
    """Check a record built in memory as the text reader would; returns it in canonical form.

    Raises :class:`RecordError` listing every problem (unknown game, illegal move, result or
    termination disagreeing with the moves...).
    """
    from engine.records.jsonform import record_from_json, record_to_json

    try:
        obj = record_to_json(record)
    except EngineError as exc:
        raise RecordError([RecordIssue(0, 0, str(exc))]) from exc
    except (TypeError, ValueError) as exc:
        raise RecordError([RecordIssue(0, 0, f"bad game parameters: {exc}")]) from exc
    return record_from_json(obj)


class RecordBuilder:
    """Builds a record move by move while a game is played (what the referee uses).

    >>> builder = RecordBuilder(load_game("tetress"), players=("alice", "bob"))
    >>> builder.add(move, think=0.12, clock=59.8)            # doctest: +SKIP
    >>> record = builder.finish()                            # doctest: +SKIP

    Each move is checked and written in the game's short notation as resolved in the position
    it was played in. :meth:`finish` fills Result and Termination from the rules when the game
    is over, or from the verdict given (e.g. ``termination="time_forfeit"``).
    """

    def __init__(
        self,
        game: Game[Any],
        *,
        initial: State[Any] | None = None,
        players: Sequence[str] = ("?", "?"),
        **tags: Any,
    ) -> None:
        self.game = game
        self.state = initial.copy() if initial is not None else game.new_state()
        start = game.new_state()
        self._setup = (
            None if self.state.to_string() == start.to_string() else self.state.to_string()
        )
        self._players = (players[0], players[1])
        self._tags = tags
        self._moves: list[RecordedMove] = []

    def add(
        self,
        move: Any,
        *,
        annotation: str | None = None,
        think: float | None = None,
        clock: float | None = None,
        lag: float | None = None,
        mem: float | None = None,
        extra: Sequence[tuple[str, str]] | Mapping[str, str] = (),
        comment: str = "",
        search: SearchInfo | None = None,
    ) -> RecordedMove:
        """Play ``move`` (an engine move) on the builder's state and record it."""
        san = self.state.san(move)
        pairs = tuple(extra.items()) if isinstance(extra, Mapping) else tuple(extra)
        recorded = RecordedMove(san, annotation, think, clock, lag, mem, pairs, comment, search)
        self.state.apply(move)
        self._moves.append(recorded)
        return recorded

    def annotate_last(self, **changes: Any) -> None:
        """Change fields of the last recorded move (e.g. add ``lag`` measured afterwards)."""
        self._moves[-1] = dataclasses.replace(self._moves[-1], **changes)

    @property
    def moves(self) -> tuple[RecordedMove, ...]:
        return tuple(self._moves)

    def finish(
        self,
        *,
        result: str | None = None,
        termination: str | None = None,
        reason: str | None = None,
    ) -> GameRecord:
        """The record so far: the rules' outcome if the game is over (a different ``result`` or
        ``termination`` is a ``ValueError``), else the verdict given, else unfinished (``*``)."""
        outcome = self.state.outcome()
        if outcome is not None:
            if result not in (None, outcome.result()) or termination not in (
                None,
                outcome.termination.value,
            ):
                raise ValueError(
                    f"the rules ended this game ({outcome.termination.value}, "
                    f"{outcome.result()}); it cannot also end {result} by {termination}"
                )
            result = outcome.result()
            termination = outcome.termination.value
        return GameRecord(
            game=self.game.name,
            params=dict(self.game.params),
            players=self._players,
            setup=self._setup,
            result=result or "*",
            termination=termination,
            reason=reason,
            moves=tuple(self._moves),
            **self._tags,
        )


def record_from_state(
    state: State[Any],
    *,
    players: Sequence[str] = ("?", "?"),
    details: Sequence[Mapping[str, Any] | None] = (),
    result: str | None = None,
    termination: str | None = None,
    reason: str | None = None,
    **tags: Any,
) -> GameRecord:
    """A record of the game that led to ``state``, from the position it was created in.

    ``details[i]`` (optional) holds keyword fields for move ``i`` (``think``, ``clock``, ``lag``,
    ``mem``, ``extra``, ``comment``, ``annotation``). ``tags`` are other :class:`GameRecord`
    fields (``event``, ``site``, ``date``, ``round``, ``time_control``, ``extra_tags``...).
    """
    start = state.copy()
    for _ in state.history:
        start.undo()
    builder = RecordBuilder(state.game, initial=start, players=players, **tags)
    for index, move in enumerate(state.history):
        fields = details[index] if index < len(details) else None
        builder.add(move, **dict(fields or {}))
    return builder.finish(result=result, termination=termination, reason=reason)
