"""Drives one agent through one game: the part shared by the network session and the local
test double, so a bot behaves the same against both.

The agent is made (its constructor, a course bot's ``Agent(color, ...)``, and
``on_game_start``) when the game first needs it: normally the first move request, so the time
it takes is charged to the bot's clock as part of its first move, as the course charges it.
"""

from __future__ import annotations

import contextlib
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TextIO

from client_sdk._agent import Agent, AgentEnv, Clocks, GameInfo, GameResult, IllegalReturn
from client_sdk._metrics import peak_rss, used_mb
from client_sdk._seed import use_game_seed
from client_sdk._think import ThinkParts, prepare
from engine.errors import EngineError
from engine.game import Game, State


@dataclass(frozen=True, slots=True)
class MoveReply:
    """What the bot answered to one move request, with its self-measured cost.

    Exactly one of: ``text`` (a move's text, for the referee to judge), ``not_a_move`` (the
    bot returned something that is not a move, e.g. ``None``: an illegal action), ``error``
    (the bot raised: a runtime error, with the traceback).
    """

    text: str | None
    think_time_s: float
    peak_rss_bytes: int
    not_a_move: str | None = None
    error: str | None = None
    #: With ``not_a_move``: what was expected (e.g. ``PlaceAction``); empty: "a move".
    expected: str = ""
    #: With ``text``: the bot's think record for this move, ready to send.
    think: ThinkParts | None = None


class GameDriver:
    """One game of one agent: keeps the SDK's copy of the position and calls the agent."""

    def __init__(
        self, factory: Callable[[], Agent], info: GameInfo, game: Game[Any], state: State[Any]
    ) -> None:
        self._factory = factory
        #: Made by :meth:`start`.
        self.agent: Agent | None = None
        self.started = False
        #: Seconds :meth:`start` took, not yet reported in a reply's ``think_time_s``.
        self._setup_s = 0.0
        self.info = info
        self.game = game
        self.state = state
        self.env = AgentEnv(
            clocks=Clocks(time_left=info.time_per_game, move_limit=info.move_time),
            memory_limit_mb=info.memory_limit_mb,
            memory_used_mb=used_mb,
        )
        self.failed: str | None = None
        #: How many accepted moves the agent has been told about.
        self.seen = 0

    def start(self) -> str | None:
        """Make the agent and tell it the game starts (once); returns a traceback if either
        raised (the game is then lost as a runtime error at the bot's first move)."""
        if self.started:
            return self.failed
        self.started = True
        began = time.perf_counter()
        where = "the agent's constructor"
        if self.info.seed is not None:
            # The same seed, so the same draws, in the game and in its replay.
            use_game_seed(self.info.seed)
        try:
            with _stdout_to_stderr():
                self.agent = self._factory()
                where = "on_game_start"
                self.agent._sdk_start(self.info, self.state.copy(), self.env)
        except Exception:
            self.failed = _report_exception(where)
        self._setup_s = time.perf_counter() - began
        return self.failed

    def request(self, clocks: Clocks, position: str | None = None) -> MoveReply:
        """Ask the agent for a move in the current position (resynchronised from ``position``).
        The agent is made first if it was not yet: its setup counts in ``think_time_s``."""
        if position is not None:
            self.resync(position)
        self.env.clocks = clocks
        self.start()
        setup, self._setup_s = self._setup_s, 0.0
        if self.failed is not None or self.agent is None:
            return MoveReply(None, setup, peak_rss(), error=self.failed)
        view = self.state.copy()
        cpu_started = time.process_time()
        started = time.perf_counter() - setup
        try:
            with _stdout_to_stderr():
                move = self.agent._sdk_choose(view, clocks, self.env)
        except Exception:
            elapsed = time.perf_counter() - started
            self.failed = _report_exception("choose_move")
            return MoveReply(None, elapsed, peak_rss(), error=self.failed)
        elapsed = time.perf_counter() - started
        if clocks.time_left is not None:
            # Until the referee says otherwise, later hooks see the budget net of this move, on
            # the clock the game charges (this process's CPU seconds on a CPU clock).
            spent = time.process_time() - cpu_started if self.info.clock == "cpu" else elapsed
            self.env.clocks = replace(clocks, time_left=clocks.time_left - spent)
        text, not_a_move = self._to_text(move)
        expected = move.expected if isinstance(move, IllegalReturn) else ""
        think = self._think() if text is not None else None
        return MoveReply(
            text, elapsed, peak_rss(), not_a_move=not_a_move, expected=expected, think=think
        )

    def _think(self) -> ThinkParts | None:
        """The agent's think record for its move (a failure here costs it nothing)."""
        try:
            think = self.agent._sdk_think() if self.agent is not None else None
        except Exception:
            return None
        return prepare(think, self.state) if think is not None else None

    def accepted(self, seat: int, text: str, position: str | None = None) -> None:
        """A move was accepted and the game goes on: update the position, tell the agent."""
        self.seen += 1
        move: Any = None
        try:
            move = self.game.move_from_text(text)
            self.state.apply(move)
        except EngineError:
            # Our copy drifted; the position in the message (or the next request) is the truth.
            pass
        if position is not None:
            self.resync(position)
        self.start()
        if self.failed is not None or self.agent is None:
            return
        try:
            with _stdout_to_stderr():
                self.agent._sdk_observe(seat, move, text, self.state.copy(), self.env)
        except Exception:
            self.failed = _report_exception("on_move")

    def finish(self, result: GameResult, position: str | None = None) -> None:
        """The game is over: tell the agent (errors here are only printed)."""
        if position is not None:
            self.resync(position)
        # A game over before the bot's first move: the agent still sees it start, then end.
        self.start()
        if self.agent is None:
            return
        try:
            with _stdout_to_stderr():
                self.agent._sdk_end(result, self.state.copy(), self.env)
        except Exception:
            _report_exception("on_game_end")

    def resync(self, position: str) -> None:
        """Make the SDK's position ``position`` (the referee's), if it differs."""
        if self.state.to_string() != position:
            self.state = self.game.state_from_string(position)

    def _to_text(self, move: object) -> tuple[str | None, str | None]:
        if isinstance(move, IllegalReturn):
            return None, move.description
        if isinstance(move, str):
            return move, None
        if move is None:
            return None, "None"
        try:
            return self.game.move_to_text(move), None
        except Exception:
            return None, repr(move)[:200]


def _stdout_to_stderr() -> contextlib.redirect_stdout[TextIO]:
    """A bot's ``print`` goes to stderr: stdout may belong to whatever runs the bot."""
    return contextlib.redirect_stdout(sys.stderr)


def _report_exception(where: str) -> str:
    text = traceback.format_exc()
    print(f"[client_sdk] the bot raised in {where}:\n{text}", file=sys.stderr, flush=True)
    return text
