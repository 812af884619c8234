"""Runs a bot written for the course skeleton (``Agent(color=..., **referee)``,
``action(**referee)``, ``update(color, action, **referee)``) as an SDK :class:`Agent`.

The calls follow the course referee: the constructor at the start of the bot's first turn (or
when it hears of the first action), charged to its clock, with ``color`` by keyword;
``action`` only when it is this bot's turn; ``update`` after every accepted action that does
not end the game, own and opponent's, with the action as its mover returned it (cell order
untouched). The ``**referee`` keywords (``time_remaining``, ``space_limit``,
``space_remaining``) are recomputed before every call. (``print`` goes to stderr: the driver
sees to that for every agent.) A course agent reports what it thought for a move, without any
change to ``action()``'s signature, by setting ``self.think_record`` (a ``dict`` with
``depth``, ``nodes``, ``score``, ``pv``, ``text``) inside ``action()``.
"""

from __future__ import annotations

import re
from typing import Any

from client_sdk._agent import Agent, AgentEnv, Clocks, GameInfo, GameResult, IllegalReturn, MoveLike
from client_sdk._think import Think, think_from
from engine.game import State
from referee.game import Coord, PlaceAction, PlayerColor

_CELL = re.compile(r"(\d+)\s*-\s*(\d+)")
#: The attribute a course agent may set in ``action()`` to report what it thought: a ``dict``
#: with ``depth``, ``nodes``, ``score``, ``pv``, ``text`` (each optional) or a ``Think``.
THINK_ATTRIBUTE = "think_record"


class CourseAgent(Agent):
    """An adapter around a course ``Agent`` class; one course instance per game."""

    def __init__(self, agent_class: type[Any], name: str | None = None) -> None:
        self.agent_class = agent_class
        self.name = name or getattr(agent_class, "__module__", "course").split(".")[0]
        self.bot: Any = None
        self._color = PlayerColor.RED
        self._last_action: PlaceAction | None = None

    def _sdk_start(self, info: GameInfo, state: State[Any], env: AgentEnv) -> None:
        self._info = info
        if state.game.name != "tetress":
            raise ValueError(f"course bots play Tetress only, not {state.game.name!r}")
        if not _from_the_start(state):
            # A course bot keeps its own board from the empty one and is told only actions.
            raise ValueError(
                f"a course bot starts from the empty board, not a position at ply {state.ply}: "
                "give the moves that lead to it (a lesson's 'history')"
            )
        self._color = PlayerColor(info.seat)
        self._last_action = None
        self.bot = self.agent_class(color=self._color, **_referee_kwargs(env))

    def _sdk_choose(self, state: State[Any], clocks: Clocks, env: AgentEnv) -> MoveLike:
        if getattr(self.bot, THINK_ATTRIBUTE, None) is not None:
            setattr(self.bot, THINK_ATTRIBUTE, None)
        action = self.bot.action(**_referee_kwargs(env))
        if not isinstance(action, PlaceAction):
            self._last_action = None
            return IllegalReturn(repr(action)[:200], "PlaceAction")
        self._last_action = action
        return str(action)

    def _sdk_think(self) -> Think | None:
        """What ``action()`` left in ``self.think_record`` (a ``Think`` or a ``dict``)."""
        return think_from(getattr(self.bot, THINK_ATTRIBUTE, None))

    def _sdk_observe(
        self, seat: int, move: Any, text: str, state: State[Any], env: AgentEnv
    ) -> None:
        color = PlayerColor(seat)
        if color is self._color and self._last_action is not None:
            action = self._last_action
        else:
            action = action_from_text(text, move)
        self.bot.update(color, action, **_referee_kwargs(env))

    def _sdk_end(self, result: GameResult, state: State[Any], env: AgentEnv) -> None:
        # The course referee says nothing to bots at the end; neither do we.
        self.bot = None


def _from_the_start(state: State[Any]) -> bool:
    """Whether a game seen first in ``state`` began at the standard start: the agent is made
    before the first action or on hearing it, so at most one action was played."""
    if state.ply == 0:
        return state.to_string() == state.game.new_state().to_string()
    return state.ply == 1


def action_from_text(text: str, move: Any = None) -> PlaceAction:
    """A :class:`PlaceAction` with its cells in the order ``text`` lists them.

    Falls back to the engine move's cells (ascending) when the text is not ``r-c`` cells.
    """
    cells = [(int(r), int(c)) for r, c in _CELL.findall(text)]
    if len(cells) != 4 and move is not None:
        cells = list(move.coords)
    if len(cells) != 4:
        raise ValueError(f"not a PLACE action: {text!r}")
    c1, c2, c3, c4 = (Coord(r, c) for r, c in cells)
    return PlaceAction(c1, c2, c3, c4)


def _referee_kwargs(env: AgentEnv) -> dict[str, Any]:
    limit = env.memory_limit_mb
    return {
        "time_remaining": env.clocks.time_left,
        "space_limit": limit,
        "space_remaining": None if limit is None else max(0.0, limit - env.memory_used_mb()),
    }
