"""The course's ``Board``: a Tetress position bots can query, play on and take back.

The rules (legality, line removal, the end of the game) are the engine's
(:mod:`engine.tetress`); this class only speaks the course's vocabulary around it and keeps
the ``_state`` mapping (every :class:`Coord` to its :class:`CellState`) that bots read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from engine.errors import EngineError, IllegalMoveError
from engine.tetress.game import Tetress
from engine.tetress.placement import Placement
from engine.tetress.state import TetressState
from referee.game.actions import PlaceAction
from referee.game.constants import BOARD_N, MAX_TURNS
from referee.game.coord import _CELLS, Coord, Direction
from referee.game.exceptions import IllegalActionException
from referee.game.pieces import Piece
from referee.game.player import PlayerColor


@dataclass(frozen=True, slots=True)
class CellState:
    """What is on one cell: a player's token, or nothing (``player is None``)."""

    player: PlayerColor | None = None

    def __str__(self) -> str:
        return "." if self.player is None else self.player.name[0].lower()


@dataclass(frozen=True, slots=True)
class CellMutation:
    """One cell's change during an action: its state before and after."""

    cell: Coord
    prev: CellState
    next: CellState


@dataclass(frozen=True, slots=True)
class BoardMutation:
    """The record of one applied action: the action and every cell it changed."""

    action: PlaceAction
    cell_mutations: frozenset[CellMutation]


_EMPTY = CellState(None)
_TOKENS = (CellState(PlayerColor.RED), CellState(PlayerColor.BLUE))
_COORDS = _CELLS
_STEPS = (Direction.Up, Direction.Down, Direction.Left, Direction.Right)
# One game object per turn-limit offset is enough; the engine's games are immutable.
_GAMES: dict[int, Tetress] = {}


def _game(turn_limit: int) -> Tetress:
    game = _GAMES.get(turn_limit)
    if game is None:
        game = _GAMES[turn_limit] = Tetress(turn_limit=turn_limit)
    return game


class Board:
    """A Tetress board: Red to move on an empty board by default.

    ``initial_state`` maps coordinates to cell states (unlisted cells are empty) and
    ``initial_player`` says who moves first. As in the course, the first two actions on any
    board (``turn_count < 2``) are exempt from the adjacency rule, whoever moves first.
    """

    def __init__(
        self,
        initial_state: Mapping[Coord, CellState] | None = None,
        initial_player: PlayerColor = PlayerColor.RED,
    ) -> None:
        # The engine's first seat moves at ply 0 and the exemption covers plies 0 and 1, so
        # the engine's seats are the course's colours in moving order: when BLUE moves first,
        # engine seat 0 holds BLUE's tokens.
        self._flip = int(initial_player is PlayerColor.BLUE)
        masks = [0, 0]
        for coord, cell in (initial_state or {}).items():
            if cell.player is not None:
                masks[self._seat(cell.player)] |= 1 << (coord.r * BOARD_N + coord.c)
        self._engine = TetressState(_game(MAX_TURNS), masks[0], masks[1], 0)
        self._mutations: list[BoardMutation] = []
        self._state: dict[Coord, CellState] = {}
        first, second = self._tokens()
        for index, coord in enumerate(_COORDS):
            bit = 1 << index
            self._state[coord] = first if masks[0] & bit else second if masks[1] & bit else _EMPTY

    def _seat(self, color: PlayerColor) -> int:
        """The engine seat of a course colour."""
        return color.value ^ self._flip

    def _color(self, seat: int) -> PlayerColor:
        """The course colour of an engine seat."""
        return PlayerColor(seat ^ self._flip)

    def _tokens(self) -> tuple[CellState, CellState]:
        """The cell states of engine seats 0 and 1."""
        return _TOKENS[self._flip], _TOKENS[1 - self._flip]

    # -- cells --------------------------------------------------------------------------------

    def __getitem__(self, cell: Coord) -> CellState:
        return self._state[cell]

    def __contains__(self, cell: object) -> bool:
        state = self._state.get(cell) if isinstance(cell, Coord) else None
        return state is not None and state.player is not None

    # -- actions ------------------------------------------------------------------------------

    def apply_action(self, action: PlaceAction) -> BoardMutation:
        """Validate and play ``action`` for the player to move, removing completed lines.

        Raises :class:`IllegalActionException` (saying why) and leaves the board unchanged
        when the action is illegal.
        """
        player = self.turn_color
        if not isinstance(action, PlaceAction):
            raise IllegalActionException(
                f"{player} played {action!r}, which is not a PlaceAction", player
            )
        try:
            move = Placement.from_cells(
                [(c.r, c.c) for c in (action.c1, action.c2, action.c3, action.c4)]
            )
            before_red, before_blue = self._engine.red_mask, self._engine.blue_mask
            self._engine.apply(move)
        except IllegalMoveError as exc:
            raise IllegalActionException(
                f"{player} played an illegal action {action}: {self._reason(exc)}", player
            ) from exc
        except (EngineError, TypeError, AttributeError) as exc:
            raise IllegalActionException(
                f"{player} played a malformed action {action}: {exc}", player
            ) from exc
        # The placed cells belong to the record even when a line removal emptied them again.
        changes = self._sync(before_red, before_blue, move.mask)
        mutation = BoardMutation(action, frozenset(changes))
        self._mutations.append(mutation)
        return mutation

    def undo_action(self) -> BoardMutation:
        """Take back the last action; returns its record. ``IndexError`` if there is none."""
        if not self._mutations:
            raise IndexError("no action to undo")
        before_red, before_blue = self._engine.red_mask, self._engine.blue_mask
        self._engine.undo()
        self._sync(before_red, before_blue)
        return self._mutations.pop()

    def _sync(self, before_red: int, before_blue: int, touched: int = 0) -> list[CellMutation]:
        """Bring ``_state`` up to the engine's cells; returns the changed (or touched) cells."""
        red, blue = self._engine.red_mask, self._engine.blue_mask
        changed = (red ^ before_red) | (blue ^ before_blue) | touched
        state = self._state
        first, second = self._tokens()
        out = []
        while changed:
            low = changed & -changed
            index = low.bit_length() - 1
            changed ^= low
            coord = _COORDS[index]
            new = first if red & low else second if blue & low else _EMPTY
            out.append(CellMutation(coord, state[coord], new))
            state[coord] = new
        return out

    # -- game status --------------------------------------------------------------------------

    @property
    def turn_count(self) -> int:
        """Actions played on this board so far."""
        return self._engine.ply

    @property
    def turn_color(self) -> PlayerColor:
        """The player to move."""
        return self._color(self._engine.to_move)

    @property
    def turn_limit_reached(self) -> bool:
        return self.turn_count >= MAX_TURNS

    @property
    def game_over(self) -> bool:
        """Whether the turn limit is reached or the player to move has no legal action."""
        return self._engine.outcome() is not None

    @property
    def winner_color(self) -> PlayerColor | None:
        """The winner once the game is over; ``None`` while playing and for a draw."""
        outcome = self._engine.outcome()
        if outcome is None or outcome.winner is None:
            return None
        return self._color(outcome.winner)

    # The counters behind the properties, under the private names bots read.
    @property
    def _turn_color(self) -> PlayerColor:
        return self.turn_color

    @property
    def _turn_count(self) -> int:
        return self.turn_count

    @property
    def _history(self) -> list[BoardMutation]:
        return self._mutations

    def _player_token_count(self, color: PlayerColor) -> int:
        return self._engine.tokens(self._seat(color))

    # -- the helpers bots call although their names start with an underscore ------------------

    def _cell_empty(self, coord: Coord) -> bool:
        return self._state[coord].player is None

    def _cell_occupied(self, coord: Coord) -> bool:
        return self._state[coord].player is not None

    def _occupied_coords(self) -> set[Coord]:
        return {coord for coord, cell in self._state.items() if cell.player is not None}

    def _has_neighbour(self, coord: Coord, color: PlayerColor) -> bool:
        """Whether any of the four torus neighbours of ``coord`` holds a ``color`` token."""
        return any(self._state[coord + step].player is color for step in _STEPS)

    def _parse_place_action(self, action: PlaceAction) -> Piece:
        """Check ``action`` for the player to move without playing it; returns its piece.

        Raises :class:`IllegalActionException` for anything but a legal placement.
        """
        player = self.turn_color
        if not isinstance(action, PlaceAction):
            raise IllegalActionException(
                f"{player} played {action!r}, which is not a PlaceAction", player
            )
        cells = [action.c1, action.c2, action.c3, action.c4]
        if not all(isinstance(c, Coord) for c in cells) or len(set(cells)) != 4:
            raise IllegalActionException(
                f"{player} played a malformed action {action}: four distinct Coords needed",
                player,
            )
        taken = [c for c in cells if self._state[c].player is not None]
        if taken:
            raise IllegalActionException(
                f"{player} played an illegal action {action}: cell {taken[0]} is occupied",
                player,
            )
        try:
            piece = Piece(cells)
        except ValueError:
            raise IllegalActionException(
                f"{player} played an illegal action {action}: the cells do not form a tetromino",
                player,
            ) from None
        if self.turn_count >= 2 and not any(self._has_neighbour(c, player) for c in cells):
            raise IllegalActionException(
                f"{player} played an illegal action {action}: no cell is next to a {player} token",
                player,
            )
        return piece

    def _reason(self, exc: IllegalMoveError) -> str:
        """The engine's reason, with its seats spoken as this board's colours."""
        player = self.turn_color
        if exc.rule == "not_adjacent":
            return f"no cell is next to a {player} token"
        if exc.rule == "game_over" and "legal placement" in exc.detail:
            return f"the game is over ({player} has no legal placement)"
        return exc.detail

    # -- text ---------------------------------------------------------------------------------

    def render(self, use_color: bool = False, use_unicode: bool = False) -> str:
        """The board as text, row 0 first (``r``/``b`` tokens, ``.`` empty)."""
        marks = {
            None: "·" if use_unicode else ".",
            PlayerColor.RED: "▣" if use_unicode else "r",
            PlayerColor.BLUE: "▣" if use_unicode else "b",
        }
        if use_color:
            marks[PlayerColor.RED] = f"\x1b[1;31m{marks[PlayerColor.RED]}\x1b[0m"
            marks[PlayerColor.BLUE] = f"\x1b[1;34m{marks[PlayerColor.BLUE]}\x1b[0m"
        lines = []
        for r in range(BOARD_N):
            row = [marks[self._state[_COORDS[r * BOARD_N + c]].player] for c in range(BOARD_N)]
            lines.append(" ".join(row))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"<Board turn {self.turn_count}, {self.turn_color} to move>"
