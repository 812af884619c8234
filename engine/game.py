"""The contract every game implements: a static :class:`Game` and a mutable :class:`State`.

The split follows OpenSpiel: a ``Game`` holds the rules and their parameters (board size, turn
limit, seat names) and makes states; a ``State`` is one position that moves are applied to and
undone from. The referee, the records, the SDK and the conformance tests only ever talk to
these two classes, so every registered game is handled alike.

Two notations exist for every move, as in chess (UCI vs SAN):

* the *long* form, :meth:`Game.move_to_text` / :meth:`Game.move_from_text`, which needs no
  position and is what goes over the wire;
* the *short* form, :meth:`State.san` / :meth:`State.parse_san`, the game's own notation as
  people write it, which may need the position to resolve (Tetris-System triads). For Tetress
  the two coincide.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any, Generic, Protocol, Self, TypeVar

from engine.outcome import Outcome

M = TypeVar("M", bound=Hashable)
M_co = TypeVar("M_co", bound=Hashable, covariant=True)


class LegalMoves(Protocol[M_co]):
    """A cheap, lazy view of the legal moves of one position.

    ``len()`` and ``in`` do not build move objects; iteration builds them one by one.
    The view reflects the position it was taken from and must not be kept across moves.
    """

    def __len__(self) -> int: ...

    def __contains__(self, move: object) -> bool: ...

    def __iter__(self) -> Iterator[M_co]: ...


class Game(ABC, Generic[M]):
    """Static rules of a game: its name, parameters and seats; makes :class:`State` objects."""

    #: Registry key, e.g. ``"tetress"``.
    name: str
    #: Human-readable title.
    title: str
    #: Names of the seats, in move order of the first ply (seat 0 moves first).
    seat_names: tuple[str, str]
    #: The board symmetries :meth:`canonical_line` folds, in words ("" for none).
    symmetries: str = ""

    @property
    @abstractmethod
    def params(self) -> Mapping[str, int]:
        """The game's parameters (e.g. ``{"turn_limit": 150}``), as stored in records."""

    @abstractmethod
    def new_state(self) -> State[M]:
        """The initial position."""

    @abstractmethod
    def state_from_string(self, text: str) -> State[M]:
        """A position from its compact string (see :meth:`State.to_string`)."""

    @abstractmethod
    def move_to_text(self, move: M) -> str:
        """The long, position-independent text of a move (the wire form)."""

    @abstractmethod
    def move_from_text(self, text: str) -> M:
        """Parse the long form; raises :class:`~engine.errors.NotationError` on bad syntax."""

    def canonical_line(self, moves: Sequence[M]) -> tuple[M, ...]:
        """One representative of the lines from the start that the rules make the same game as
        ``moves`` (up to a symmetry of the board that keeps the seats): equivalent lines give
        the same tuple. A game without such symmetries returns the line as it is."""
        return tuple(moves)

    def seat_index(self, name: str) -> int:
        """The seat index for a seat name (case-insensitive)."""
        upper = name.upper()
        for index, seat in enumerate(self.seat_names):
            if seat == upper:
                return index
        raise ValueError(f"{self.name} has no seat {name!r}; seats are {self.seat_names}")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and other.name == self.name and other.params == self.params

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted(self.params.items()))))


class State(ABC, Generic[M]):
    """One position of a game. Mutable: :meth:`apply` and :meth:`undo` change it in place."""

    game: Game[M]

    @property
    @abstractmethod
    def to_move(self) -> int:
        """The seat index of the player to move."""

    @property
    @abstractmethod
    def ply(self) -> int:
        """How many moves have been played (by both seats) to reach this position."""

    @property
    @abstractmethod
    def legal_moves(self) -> LegalMoves[M]:
        """The legal moves of the player to move (empty once the game is over)."""

    @abstractmethod
    def check(self, move: M) -> None:
        """Raise :class:`~engine.errors.IllegalMoveError` (saying which rule) if illegal."""

    @abstractmethod
    def apply(self, move: M) -> None:
        """Validate and play ``move``; raises ``IllegalMoveError`` and leaves the state as is."""

    @abstractmethod
    def undo(self) -> M:
        """Take back the last move and return it; ``IndexError`` if there is none."""

    @abstractmethod
    def copy(self) -> Self:
        """An independent copy (history included)."""

    @abstractmethod
    def outcome(self) -> Outcome | None:
        """``None`` while play goes on, else the winner and the termination."""

    @property
    @abstractmethod
    def zobrist(self) -> int:
        """A 64-bit Zobrist-style hash of the position (board, side to move, phase)."""

    @abstractmethod
    def to_string(self) -> str:
        """The compact position string; ``game.state_from_string`` reads it back."""

    @abstractmethod
    def san(self, move: M) -> str:
        """The move in the game's short notation, as resolved in this position."""

    @abstractmethod
    def parse_san(self, text: str) -> M:
        """Resolve short notation in this position.

        Raises ``NotationError`` (syntax), ``IllegalMoveError`` or ``AmbiguousMoveError``.
        """

    @abstractmethod
    def grid(self) -> list[str]:
        """The board as rows of one character per cell, top row first.

        ``.`` is an empty cell; any other character names what is there (``r``/``b`` for
        Tetress tokens, ``#`` for ATT blocks). Renderers (text, ANSI, SVG) build on this.
        """

    @abstractmethod
    def render(self, color: bool = False) -> str:
        """A text picture of the position (ANSI colours when ``color``)."""

    @property
    @abstractmethod
    def history(self) -> tuple[M, ...]:
        """The moves played from the state this one was created from."""

    def is_over(self) -> bool:
        return self.outcome() is not None

    def is_legal(self, move: object) -> bool:
        return move in self.legal_moves

    def __str__(self) -> str:
        return self.render()

    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary (game, position string, side to move, ply)."""
        return {
            "game": self.game.name,
            "params": dict(self.game.params),
            "position": self.to_string(),
            "to_move": self.game.seat_names[self.to_move],
            "ply": self.ply,
        }
