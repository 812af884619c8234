"""What a bot author writes: an :class:`Agent` (or a plain function) that picks moves.

The SDK calls, for each game::

    on_game_start(info, state)             once, before anything else
    choose_move(state, clocks) -> move     whenever it is this bot's turn
    on_move(seat, move, state)             after every accepted move that does not end the game
                                           (own and opponent's; the default forwards the
                                           opponent's ones to on_opponent_move)
    on_game_end(result, state)             once, with the verdict

and, between games, ``accept_challenge(challenger, game) -> bool`` when another bot challenges
this one and ``--accept-challenges`` was not given (the default accepts).

Every ``state`` handed to an agent is its own copy: searching on it (apply/undo) is safe.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from client_sdk._think import Think
from engine.adjudication.verdicts import Ending, Verdict
from engine.game import State

#: What ``choose_move`` may return: an engine move object, or its text (``PLACE(1-2, ...)``).
MoveLike: TypeAlias = Hashable | str


@dataclass(frozen=True, slots=True)
class Clocks:
    """The clocks when a move is requested, in seconds (``None``: no limit of that kind).

    ``time_left`` is this bot's remaining whole-game budget, ``opponent_time_left`` the
    opponent's, ``move_limit`` the most this one move may take (the referee's per-move limit,
    already capped by ``time_left``). The referee's clock is authoritative; it counts what
    :attr:`GameInfo.clock` says: wall time from sending the request to receiving the move (so
    network latency is charged too), or on a CPU clock the CPU time this bot's processes used.
    """

    time_left: float | None
    opponent_time_left: float | None = None
    move_limit: float | None = None
    increment: float = 0.0

    @property
    def budget(self) -> float | None:
        """The time this move may take: the smaller of ``move_limit`` and ``time_left``."""
        limits = [x for x in (self.move_limit, self.time_left) if x is not None]
        return min(limits) if limits else None


@dataclass(frozen=True, slots=True)
class GameInfo:
    """One game as announced by the referee."""

    game_id: str
    game: str
    seat: int
    seat_names: tuple[str, str]
    params: Mapping[str, int] = field(default_factory=dict)
    time_per_game: float | None = None
    move_time: float | None = None
    increment: float = 0.0
    memory_limit_mb: float | None = None
    opponent: str = ""
    #: What the clocks count: ``cpu`` (this bot's own CPU seconds, as in the course; games
    #: whose bots the referee launched) or ``wall`` (time at the referee; any game with a
    #: remote bot). See docs/sdk.md.
    clock: str = "wall"
    #: The seed the referee handed this seat for the game (see :func:`client_sdk.game_seed`);
    #: None: none.
    seed: int | None = None

    @property
    def seat_name(self) -> str:
        """This bot's seat, e.g. ``RED``."""
        return self.seat_names[self.seat]


@dataclass(frozen=True, slots=True)
class GameResult:
    """How a game ended, from one bot's point of view.

    ``winner`` is a seat index or ``None`` for a draw or an aborted game (``aborted``: the
    referee stopped it, or the connection to the referee was lost for good; no result, never
    a loss); ``verdict`` is
    the referee's fixed vocabulary, a :class:`~engine.adjudication.Verdict` (``normal``,
    ``turn_limit``, ``time``, ``memory``, ``illegal_move``, ``runtime_error``,
    ``protocol_error``, ``disconnect``, ``aborted``); ``termination`` the detail: the rules'
    :class:`~engine.outcome.Termination` for a normal end, else the verdict; ``reason`` the
    sentence for people, e.g. "BLUE exceeded its time: used 2.31 s of 2.00 s".
    """

    game_id: str
    seat: int
    winner: int | None
    verdict: Verdict
    termination: Ending
    reason: str
    plies: int = 0
    seat_names: tuple[str, str] = ("RED", "BLUE")

    @property
    def winner_name(self) -> str:
        """``RED``/``BLUE`` (the winning seat's name), ``DRAW`` or ``ABORTED``."""
        if self.winner is not None:
            return self.seat_names[self.winner]
        return "ABORTED" if self.aborted else "DRAW"

    @property
    def won(self) -> bool:
        return self.winner == self.seat

    @property
    def drawn(self) -> bool:
        return self.winner is None and not self.aborted

    @property
    def aborted(self) -> bool:
        return self.verdict == "aborted"

    @property
    def lost(self) -> bool:
        return self.winner is not None and self.winner != self.seat


class Agent:
    """Base class of SDK bots: override :meth:`choose_move`, and any hook you need.

    One instance may play several games in a row; :meth:`on_game_start` is the place to reset
    per-game state. Exceptions raised here end the game as a runtime error (the traceback is
    printed on stderr and sent to the referee).
    """

    #: Shown to the referee when no ``--name`` is given.
    name: str | None = None

    def on_game_start(self, info: GameInfo, state: State[Any]) -> None:
        """A new game starts (``state`` is its initial position)."""

    def choose_move(self, state: State[Any], clocks: Clocks) -> MoveLike:
        """The move to play in ``state``: an engine move, or its text."""
        raise NotImplementedError(f"{type(self).__name__} must define choose_move(state, clocks)")

    def on_move(self, seat: int, move: Any, state: State[Any]) -> None:
        """A move was accepted and the game goes on; ``state`` is the position after it."""
        if self._info is not None and seat != self._info.seat:
            self.on_opponent_move(move, state)

    def on_opponent_move(self, move: Any, state: State[Any]) -> None:
        """The opponent played ``move`` (the game goes on); ``state`` is the position after it."""

    def on_game_end(self, result: GameResult, state: State[Any]) -> None:
        """The game is over (``state`` is the last position known to the SDK)."""

    def think(
        self,
        *,
        depth: int | None = None,
        nodes: int | None = None,
        score: float | None = None,
        pv: Sequence[Any] = (),
        text: str = "",
    ) -> None:
        """Attach a think record to the move being chosen (call it inside ``choose_move``):
        ``depth`` searched, ``nodes`` visited, ``score`` from this bot's own point of view
        (positive: it thinks it is ahead), ``pv`` the expected line starting with the move it
        returns (engine moves or text), ``text`` a short note. Each part is optional; the record
        is shown on the game page and kept in the record, and never changes a verdict. A later
        call replaces an earlier one for the same move."""
        self._think = Think(depth, nodes, score, tuple(pv), text)

    def accept_challenge(self, challenger: str, game: str) -> bool:
        """Whether to play ``challenger`` (``owner/name``), who asks for one game of ``game``
        (e.g. ``tetress``); asked when ``--accept-challenges`` is not given. Answer quickly:
        no answer within the server's challenge wait is a refusal. Default: accept."""
        return True

    # -- SDK plumbing (not part of the author-facing API) ------------------------------------

    _info: GameInfo | None = None
    _think: Think | None = None

    def _sdk_start(self, info: GameInfo, state: State[Any], env: AgentEnv) -> None:
        self._info = info
        self.on_game_start(info, state)

    def _sdk_choose(self, state: State[Any], clocks: Clocks, env: AgentEnv) -> MoveLike:
        self._think = None
        return self.choose_move(state, clocks)

    def _sdk_think(self) -> Think | None:
        """The think record attached to the move just chosen, if any (taken once)."""
        think, self._think = self._think, None
        return think

    def _sdk_observe(
        self, seat: int, move: Any, text: str, state: State[Any], env: AgentEnv
    ) -> None:
        self.on_move(seat, move, state)

    def _sdk_end(self, result: GameResult, state: State[Any], env: AgentEnv) -> None:
        self.on_game_end(result, state)


@dataclass(slots=True)
class AgentEnv:
    """What the SDK knows besides the position, for adapters that need it (course bots)."""

    clocks: Clocks
    memory_limit_mb: float | None = None
    memory_used_mb: Callable[[], float] = lambda: 0.0


class FunctionAgent(Agent):
    """An :class:`Agent` made from a plain function ``fn(state, clocks) -> move``."""

    def __init__(self, fn: Callable[[State[Any], Clocks], MoveLike], name: str | None = None):
        self._fn = fn
        self.name = name or getattr(fn, "__name__", None)

    def choose_move(self, state: State[Any], clocks: Clocks) -> MoveLike:
        return self._fn(state, clocks)


class IllegalReturn:
    """Marks a value returned by a bot that is not a move at all (e.g. ``None``).

    The SDK sends it as a move the referee will reject as illegal, with ``description`` saying
    what was returned.
    """

    __slots__ = ("description", "expected")

    def __init__(self, description: str, expected: str = "") -> None:
        self.description = description
        #: What the bot should have returned (e.g. ``PlaceAction``); empty: "a move".
        self.expected = expected

    def __repr__(self) -> str:
        return f"IllegalReturn({self.description!r})"
