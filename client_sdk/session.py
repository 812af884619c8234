"""The network side of the SDK: one long-lived bidirectional gRPC stream to the referee.

:func:`run` connects, says hello, then plays every game the referee starts over that one stream
(one after another), answering move requests with the agent's moves plus the measured think
time and peak memory. The connection is kept alive with HTTP/2 pings; when it drops the SDK
reconnects with exponential back-off and asks to resume its session.
"""

from __future__ import annotations

import platform
import queue
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from client_sdk.agent import Agent, Clocks, GameInfo, GameResult
from client_sdk.driver import GameDriver
from client_sdk.loader import AgentFactory, factory_for, games_of, load_bot
from client_sdk.proto import referee_pb2 as pb
from client_sdk.proto import referee_pb2_grpc as pb_grpc
from client_sdk.version import PROTOCOL_VERSION, SDK_VERSION
from engine.game import Game
from engine.registry import load_game

#: HTTP/2 keep-alive: ping every 20 s of silence, give up on the link after 10 s without an
#: answer. The referee must allow pings this often (it does: see ``docs/sdk.md``).
KEEPALIVE_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    # gRPC 1.6x+ waits this long for a ping's answer (default 60 s), whatever keepalive_timeout.
    ("grpc.http2.ping_timeout_ms", 10_000),
    ("grpc.max_receive_message_length", 16 * 2**20),
)

_FATAL_CODES = {
    pb.ERROR_CODE_UNAUTHENTICATED,
    pb.ERROR_CODE_UNSUPPORTED_PROTOCOL,
    pb.ERROR_CODE_NO_GAMES,
}
_RETRY_STATUS = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}


class SessionError(Exception):
    """The referee refused the session (bad token, no common game...) or could not be reached."""


@dataclass
class Backoff:
    """Exponential back-off with full jitter between reconnection attempts."""

    initial: float = 0.5
    maximum: float = 30.0
    attempts: int = 8
    _failures: int = field(default=0, init=False)

    def reset(self) -> None:
        self._failures = 0

    def next_delay(self) -> float | None:
        """Seconds to wait before the next attempt, or ``None`` when out of attempts."""
        if self._failures >= self.attempts:
            return None
        delay = min(self.maximum, self.initial * 2**self._failures)
        self._failures += 1
        return random.uniform(delay / 2, delay)


def run(
    agent: Agent | type[Agent] | Callable[..., Any] | str,
    server: str,
    token: str = "",
    *,
    name: str | None = None,
    version: str = "",
    games: int | None = None,
    game_names: Sequence[str] = (),
    credentials: grpc.ChannelCredentials | None = None,
    reconnect: bool = True,
    backoff: Backoff | None = None,
    log: Callable[[str], None] | None = None,
) -> list[GameResult]:
    """Connect ``agent`` to the referee at ``server`` (``host:port`` or ``unix:path``) and play.

    ``agent`` is an :class:`Agent` instance (kept for every game), an :class:`Agent` subclass
    or a course ``Agent`` class (a fresh instance per game), a function
    ``fn(state, clocks) -> move``, or a BOT string as taken by ``python -m client_sdk``.
    Plays until the referee says goodbye, or until ``games`` games are over. Returns the
    results in the order the games ended. ``credentials`` switches to TLS.
    """
    factory = load_bot(agent) if isinstance(agent, str) else factory_for(agent)
    session = Session(
        factory,
        server,
        token,
        name=name or bot_name(agent),
        version=version,
        games=games,
        game_names=game_names or games_of(factory),
        credentials=credentials,
        log=log or _stderr,
    )
    return session.run(reconnect=reconnect, backoff=backoff or Backoff())


def bot_name(agent: object) -> str:
    """A default name for a bot: its ``name`` attribute, else its class, function or path."""
    if isinstance(agent, str):
        target = agent.rpartition(":")[0] if ":" in agent else agent
        return target.rstrip("/").replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".py")
    named = getattr(agent, "name", None)
    if isinstance(named, str) and named:
        return named
    return str(getattr(agent, "__name__", type(agent).__name__))


def _stderr(line: str) -> None:
    print(f"[client_sdk] {line}", file=sys.stderr, flush=True)


class _Outbox:
    """The bot's half of the stream: messages queued here are sent in order."""

    _CLOSE = object()

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def send(self, message: pb.BotMessage) -> None:
        self._queue.put(message)

    def close(self) -> None:
        self._queue.put(self._CLOSE)

    def __iter__(self) -> Iterator[pb.BotMessage]:
        while True:
            item = self._queue.get()
            if item is self._CLOSE:
                return
            yield item


class Session:
    """One bot's session with a referee, across reconnections."""

    def __init__(
        self,
        factory: AgentFactory,
        server: str,
        token: str,
        *,
        name: str | None = None,
        version: str = "",
        games: int | None = None,
        game_names: Sequence[str] = (),
        credentials: grpc.ChannelCredentials | None = None,
        log: Callable[[str], None] = _stderr,
    ) -> None:
        self.factory = factory
        self.server = server
        self.token = token
        self.version = version
        self.max_games = games
        self.game_names = tuple(game_names)
        self.credentials = credentials
        self.log = log
        self.name = name or "bot"
        self.session_id = ""
        self.results: list[GameResult] = []
        self._drivers: dict[str, GameDriver] = {}
        self._games: dict[tuple[str, tuple[tuple[str, int], ...]], Game[Any]] = {}
        self._started = 0
        self._said_goodbye = False
        self._done = False
        self._outbox: _Outbox | None = None
        self._lock = threading.Lock()

    # -- connection ---------------------------------------------------------------------------

    def run(self, reconnect: bool = True, backoff: Backoff | None = None) -> list[GameResult]:
        backoff = backoff or Backoff()
        while True:
            try:
                self._connect_once(backoff)
                return self.results
            except (grpc.RpcError, _Dropped) as exc:
                code = exc.code() if hasattr(exc, "code") else None
                detail = exc.details() if hasattr(exc, "details") else str(exc)
                if self._done:
                    return self.results
                if not reconnect or code not in _RETRY_STATUS:
                    raise SessionError(
                        f"connection to {self.server} failed: {code} {detail}"
                    ) from exc
                delay = backoff.next_delay()
                if delay is None:
                    raise SessionError(
                        f"gave up reconnecting to {self.server}: {code} {detail}"
                    ) from None
                self.log(
                    f"connection lost ({code.name if code else '?'}: {detail}); "
                    f"retrying in {delay:.1f} s"
                )
                time.sleep(delay)

    def _channel(self) -> grpc.Channel:
        if self.credentials is not None:
            return grpc.secure_channel(self.server, self.credentials, options=KEEPALIVE_OPTIONS)
        return grpc.insecure_channel(self.server, options=KEEPALIVE_OPTIONS)

    def _connect_once(self, backoff: Backoff) -> None:
        self._said_goodbye = False
        outbox = _Outbox()
        self._outbox = outbox
        outbox.send(pb.BotMessage(hello=self._hello()))
        with self._channel() as channel:
            stub = pb_grpc.RefereeStub(channel)
            responses = stub.Play(iter(outbox))
            try:
                for message in responses:
                    kind = message.WhichOneof("kind")
                    if kind == "welcome":
                        backoff.reset()
                    self._handle(kind, message)
                    if self._done:
                        break
            finally:
                outbox.close()
                if self._done:
                    responses.cancel()
        if not self._done:
            # The referee closed the stream without a goodbye: treat as a drop.
            raise _Dropped()

    def _hello(self) -> pb.Hello:
        return pb.Hello(
            bot_name=self.name,
            bot_version=self.version,
            token=self.token,
            sdk_version=f"{SDK_VERSION} python/{platform.python_version()}",
            games=list(self.game_names),
            protocol_version=PROTOCOL_VERSION,
            max_games=1,
            resume_session_id=self.session_id,
        )

    def _send(self, **kind: Any) -> None:
        assert self._outbox is not None
        self._outbox.send(pb.BotMessage(**kind))

    # -- messages -----------------------------------------------------------------------------

    def _handle(self, kind: str | None, message: pb.RefereeMessage) -> None:
        if kind == "welcome":
            w = message.welcome
            if self.session_id and w.session_id != self.session_id:
                self._abandon_games()
            self.session_id = w.session_id
            if self.max_games is not None and self._started >= self.max_games:
                # Said on a connection that dropped: say it again on this one.
                self._goodbye("played the requested number of games")
            self.log(
                f"connected to {self.server} as {w.bot_name or self.name} "
                f"({w.server_version}); {w.message}".rstrip("; ")
            )
        elif kind == "game_start":
            self._game_start(message.game_start.game_id, message.game_start.info)
        elif kind == "move_request":
            self._move_request(message.move_request)
        elif kind == "move_played":
            mp = message.move_played
            driver = self._drivers.get(mp.game_id)
            if driver is not None:
                self._note_clocks(driver, mp.clocks)
                driver.accepted(mp.seat, mp.action, mp.position or None)
        elif kind == "game_over":
            self._game_over(message.game_over)
        elif kind == "error":
            err = message.error
            name = pb.ErrorCode.Name(err.code)
            where = f" (game {err.game_id})" if err.game_id else ""
            self.log(f"referee error {name}{where}: {err.message}")
            if err.code in _FATAL_CODES or (err.fatal and not self._drivers):
                self._done = True
                if err.code in _FATAL_CODES:
                    raise SessionError(f"the referee refused the session: {name}: {err.message}")
        elif kind == "goodbye":
            self.log(f"the referee said goodbye: {message.goodbye.reason}")
            self._done = True

    def _game(self, spec: pb.GameSpec) -> Game[Any]:
        key = (spec.name, tuple(sorted(spec.params.items())))
        game = self._games.get(key)
        if game is None:
            game = self._games[key] = load_game(spec.name, **dict(spec.params))
        return game

    def _game_start(self, game_id: str, info: pb.GameInfo) -> GameDriver:
        existing = self._drivers.get(game_id)
        if existing is not None:
            # A resumed session: the referee re-announces games already running.
            return existing
        game = self._game(info.game)
        state = game.state_from_string(info.initial_position)
        tc = info.time_control
        players = [p.name for p in info.players]
        game_info = GameInfo(
            game_id=game_id,
            game=info.game.name,
            seat=info.seat,
            seat_names=(info.seat_names[0], info.seat_names[1])
            if len(info.seat_names) == 2
            else game.seat_names,
            params=dict(info.game.params),
            time_per_game=tc.game_time_s or None,
            move_time=tc.move_time_s or None,
            increment=tc.increment_s,
            memory_limit_mb=info.memory_limit_bytes / 2**20 if info.memory_limit_bytes else None,
            opponent=players[1 - info.seat] if len(players) == 2 else "",
        )
        driver = GameDriver(self.factory(), game_info, game, state)
        self._drivers[game_id] = driver
        self._started += 1
        self.log(
            f"game {game_id}: {info.game.name}, playing {game_info.seat_name}"
            + (f" against {game_info.opponent}" if game_info.opponent else "")
        )
        error = driver.start()
        if error is not None:
            self._runtime_error(game_id, error)
        if self.max_games is not None and self._started >= self.max_games:
            self._goodbye("played the requested number of games")
        return driver

    def _move_request(self, req: pb.MoveRequest) -> None:
        driver = self._drivers.get(req.game_id)
        if driver is None:
            # Resynchronise from nothing: the request repeats the game's fixed facts.
            driver = self._game_start(req.game_id, req.info)
        if req.moves:
            # Every move so far: tell the agent the ones it has not seen, in order (a course
            # bot rebuilds its own board from these updates after a resync).
            for text in req.moves[driver.seen :]:
                driver.accepted(driver.state.to_move, text, None)
        elif req.HasField("last_move"):
            lm = req.last_move
            driver.accepted(lm.seat, lm.action, lm.position or None)
        seat = driver.info.seat
        clocks = Clocks(
            time_left=_remaining(req.clocks, seat),
            opponent_time_left=_remaining(req.clocks, 1 - seat),
            move_limit=req.move_time_limit_s if req.HasField("move_time_limit_s") else None,
            increment=driver.info.increment,
        )
        reply = driver.request(clocks, req.position or None)
        if reply.error is not None:
            self._runtime_error(req.game_id, reply.error)
            return
        move = pb.Move(
            game_id=req.game_id,
            ply=req.ply,
            think_time_s=reply.think_time_s,
            peak_rss_bytes=reply.peak_rss_bytes,
        )
        if reply.text is None:
            # Not a move at all (e.g. None): said so, and the referee judges an illegal move
            # naming what was returned, as the course does.
            returned = reply.not_a_move or "None"
            move.not_a_move.returned = returned
            move.not_a_move.expected = reply.expected
            move.comment = f"not a move: the bot returned {returned}"[:256]
        else:
            move.action = reply.text
        self._send(move=move)

    def _note_clocks(self, driver: GameDriver, clocks: Sequence[pb.Clock]) -> None:
        seat = driver.info.seat
        old = driver.env.clocks
        driver.env.clocks = Clocks(
            time_left=_remaining(clocks, seat, old.time_left),
            opponent_time_left=_remaining(clocks, 1 - seat, old.opponent_time_left),
            move_limit=old.move_limit,
            increment=old.increment,
        )

    def _runtime_error(self, game_id: str, text: str) -> None:
        self._send(
            error=pb.Error(
                code=pb.ERROR_CODE_BOT_RUNTIME_ERROR, message=text[-4000:], game_id=game_id
            )
        )

    def _game_over(self, over: pb.GameOver) -> None:
        driver = self._drivers.pop(over.game_id, None)
        if driver is None:
            return
        result = GameResult(
            game_id=over.game_id,
            seat=driver.info.seat,
            winner=over.winner_seat if over.HasField("winner_seat") else None,
            verdict=pb.Verdict.Name(over.verdict).removeprefix("VERDICT_").lower(),
            termination=over.termination,
            reason=over.reason,
            plies=over.plies,
            seat_names=driver.info.seat_names,
        )
        driver.finish(result, over.final_position or None)
        self.results.append(result)
        self.log(f"game {over.game_id} over: {over.result} {result.winner_name} ({over.reason})")
        if self.max_games is not None and len(self.results) >= self.max_games:
            self._done = True

    def _abandon_games(self) -> None:
        """The referee did not resume our session: the games it was running are lost to us.

        They are over for the referee (a disconnect, which it scores as a loss); tell the
        agents so and count them, so that ``games=N`` still ends.
        """
        for game_id, driver in list(self._drivers.items()):
            seat = driver.info.seat
            result = GameResult(
                game_id=game_id,
                seat=seat,
                winner=1 - seat,
                verdict="disconnect",
                termination="disconnect",
                reason="the connection to the referee dropped and the session was not resumed",
                plies=driver.state.ply,
                seat_names=driver.info.seat_names,
            )
            driver.finish(result)
            self.results.append(result)
            self.log(f"game {game_id} lost: {result.reason}")
        self._drivers.clear()
        if self.max_games is not None and len(self.results) >= self.max_games:
            self._goodbye("played the requested number of games")
            self._done = True

    def _goodbye(self, reason: str) -> None:
        if not self._said_goodbye:
            self._said_goodbye = True
            self._send(goodbye=pb.Goodbye(reason=reason))


class _Dropped(Exception):
    """The stream ended without the referee saying goodbye."""

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "the referee closed the stream"


def _remaining(clocks: Sequence[pb.Clock], seat: int, default: float | None = None) -> float | None:
    if 0 <= seat < len(clocks):
        clock = clocks[seat]
        return clock.remaining_s if clock.HasField("remaining_s") else None
    return default
