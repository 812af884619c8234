"""The network side of the SDK: one long-lived bidirectional gRPC stream to the referee.

:func:`run` connects, says hello, then plays every game the referee starts over that one stream
(one after another), answering move requests with the agent's moves plus the measured think
time and peak memory. The connection is kept alive with HTTP/2 pings; when it drops the SDK
reconnects with exponential back-off and asks to resume its session.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from client_sdk._admission import FINAL_REFUSALS, HANDSHAKE_TIMEOUT_S, HandshakeWatch, refusal
from client_sdk._agent import Agent, Clocks, GameResult
from client_sdk._challenge import ChallengePolicy, ChallengeSide
from client_sdk._connect import DEFAULT_WAIT_FOR_SERVER_S, Connector
from client_sdk._driver import GameDriver
from client_sdk._inbox import Inbox, over_while_thinking
from client_sdk._link import Backoff, Dropped, Outbox, SessionError
from client_sdk._loader import AgentFactory, bot_name, factory_for, games_of, load_bot
from client_sdk._messages import game_info_of, protocol_mismatch, result_of, think_message
from client_sdk._messages import remaining as _remaining
from client_sdk._options import address_of
from client_sdk._seed import apply_seed
from client_sdk._tls import Tls
from client_sdk._version import PROTOCOL_VERSION, SDK_VERSION
from client_sdk.proto import referee_pb2 as pb
from client_sdk.proto import referee_pb2_grpc as pb_grpc
from engine.adjudication.verdicts import Verdict
from engine.game import Game
from engine.registry import load_game

_FATAL_CODES = FINAL_REFUSALS
#: How long a connection's end waits for its reader thread, which holds the call until it ends.
INBOX_JOIN_S = 5.0


def run(
    agent: Agent | type[Agent] | Callable[..., Any] | str,
    server: str,
    token: str = "",
    *,
    name: str | None = None,
    version: str = "",
    games: int | None = None,
    game_names: Sequence[str] = (),
    credentials: grpc.ChannelCredentials | Tls | None = None,
    reconnect: bool = True,
    backoff: Backoff | None = None,
    log: Callable[[str], None] | None = None,
    wait_for_server: float = DEFAULT_WAIT_FOR_SERVER_S,
    channel: str = "",
    challenge: str = "",
    accept_challenges: ChallengePolicy | str | None = None,
) -> list[GameResult]:
    """Connect ``agent`` to the referee at ``server`` (``host:port`` or ``unix:path``) and play.

    ``agent`` is an :class:`Agent` instance (kept for every game), an :class:`Agent` subclass
    or a course ``Agent`` class (a fresh instance per game), a function
    ``fn(state, clocks) -> move``, or a BOT string as taken by ``python -m client_sdk``.
    Plays until the referee says goodbye, or until ``games`` games are over. Returns the
    results in the order the games ended. ``credentials`` switches to TLS: gRPC channel
    credentials, or a :class:`client_sdk.tls.Tls` (CA, client certificate and key files),
    with which a failed handshake is a :class:`SessionError` saying why. A referee that
    cannot be reached within ``wait_for_server`` seconds of the start is a
    :class:`SessionError` at once; reconnection (with ``backoff``) is for connections that
    were up. ``challenge`` and ``accept_challenges``: see :mod:`client_sdk._challenge`.
    """
    apply_seed()
    factory = load_bot(agent) if isinstance(agent, str) else factory_for(agent)
    session = Session(
        factory,
        server,
        token,
        name=name or bot_name(agent),
        version=version,
        games=games,
        game_names=game_names or games_of(factory),
        wanted_games=game_names,
        credentials=credentials,
        log=log or _stderr,
        channel=channel,
        challenge=challenge,
        accept_challenges=accept_challenges,
    )
    return session.run(
        reconnect=reconnect, backoff=backoff or Backoff(), wait_for_server=wait_for_server
    )


def _plain(credentials: grpc.ChannelCredentials | Tls | None) -> grpc.ChannelCredentials | None:
    return None if isinstance(credentials, Tls) else credentials


def _stderr(line: str) -> None:
    print(f"[client_sdk] {line}", file=sys.stderr, flush=True)


class Session(ChallengeSide, Connector):
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
        wanted_games: Sequence[str] = (),
        credentials: grpc.ChannelCredentials | Tls | None = None,
        log: Callable[[str], None] = _stderr,
        channel: str = "",
        challenge: str = "",
        accept_challenges: ChallengePolicy | str | None = None,
    ) -> None:
        self.factory = factory
        self._init_challenges(challenge, accept_challenges, factory)
        self.server = address_of(server, tls=credentials is not None)
        self.token = token
        self.version = version
        self.max_games = games
        self.game_names = tuple(game_names)
        #: The games asked for in casual play (empty: the server's default game).
        self.wanted_games = tuple(wanted_games)
        #: The named channel to be paired in (empty: the open pool).
        self.channel = channel
        #: The TLS files, kept to explain a failed handshake (see :mod:`client_sdk._tls`).
        self.tls = credentials if isinstance(credentials, Tls) else None
        self.credentials = self.tls.credentials() if self.tls else _plain(credentials)
        self.log = log
        self.name = name or "bot"
        self.session_id = ""
        #: The run of the referee process that welcomed us last (see ``Welcome.server_run``).
        self.server_run = ""
        self.results: list[GameResult] = []
        self._drivers: dict[str, GameDriver] = {}
        #: Per game: the ply and text of the move this bot sent last (accepted if the game goes
        #: on; the referee announces only the opponent's reply as ``last_move``).
        self._answered: dict[str, tuple[int, str]] = {}
        self._games: dict[tuple[str, tuple[tuple[str, int], ...]], Game[Any]] = {}
        self._started = 0
        self._welcomed = False
        #: Welcomed on the current stream (a refusal before it is a handshake refusal).
        self._link_welcomed = False
        #: Seconds to wait for the Welcome before trying again.
        self.handshake_timeout = HANDSHAKE_TIMEOUT_S
        self._said_goodbye = False
        self._done = False
        self._outbox: Outbox | None = None
        self._lock = threading.Lock()
        #: The game whose move the agent is thinking about, if any; the games that ended
        #: meanwhile (their move is not sent).
        self._thinking: str | None = None
        self._over_early: set[str] = set()

    # -- connection (the retry loop is :class:`Connector`'s) ------------------------------

    def _connect_once(self, backoff: Backoff) -> None:
        self._said_goodbye = False
        self._link_welcomed = False
        outbox = Outbox()
        self._outbox = outbox
        outbox.send(pb.BotMessage(hello=self._hello()))
        with self._channel() as channel:
            stub = pb_grpc.RefereeStub(channel)
            responses = stub.Play(iter(outbox))
            watch = HandshakeWatch(responses.cancel, self.handshake_timeout)
            inbox = Inbox(responses, self._over_while_thinking)
            try:
                for message in inbox:
                    kind = message.WhichOneof("kind")
                    if kind == "welcome":
                        watch.welcomed()
                        backoff.reset()
                        self._welcomed = self._link_welcomed = True
                    self._handle(kind, message)
                    if self._done:
                        break
            except grpc.RpcError:
                if watch.fired:
                    raise watch.refused() from None
                raise
            finally:
                watch.stop()
                outbox.close()
                responses.cancel()  # a no-op on a call that is already over
                inbox.join(INBOX_JOIN_S)
                # Free the call now, while gRPC's threads run: finalised at interpreter exit, it
                # could wait forever on a lock held by a frozen gRPC thread (a bot that hangs).
                del watch, responses, inbox
        if not self._done:
            # The referee closed the stream without a goodbye: treat as a drop.
            raise Dropped()

    def _hello(self) -> pb.Hello:
        return pb.Hello(
            bot_name=self.name,
            bot_version=self.version,
            token=self.token,
            sdk_version=f"{SDK_VERSION} python/{sys.version.split()[0]}",
            games=list(self.game_names),
            wanted_games=list(self.wanted_games),
            channel=self.channel,
            challenge=self.challenge,
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
            if w.protocol_version != PROTOCOL_VERSION:
                self._done = True
                raise SessionError(protocol_mismatch(w.protocol_version, w.server_version))
            if self.session_id and w.session_id != self.session_id:
                self._abandon_games(restarted=w.server_run != self.server_run)
            self.session_id = w.session_id
            self.server_run = w.server_run
            if self.max_games is not None and self._started >= self.max_games:
                # Said on a connection that dropped: say it again on this one.
                self._goodbye("played the requested number of games")
            self.log(
                f"connected to {self.server} as {w.bot_name or self.name} "
                f"({w.server_version}); {w.message}".rstrip("; ")
            )
        elif kind == "game_start":
            self._game_start(message.game_start)
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
            if not self._link_welcomed:
                refused = refusal(err)
                if refused is not None:
                    raise refused
            if err.code in _FATAL_CODES:
                # Said once, by whoever catches the error (the command prints it).
                self._done = True
                raise SessionError(f"the referee refused the session: {name}: {err.message}")
            self.log(f"referee error {name}{where}: {err.message}")
            if err.fatal and not self._drivers:
                self._done = True
        elif kind == "goodbye":
            self.log(f"the referee said goodbye: {message.goodbye.reason}")
            self._done = True
            self._refused()
        elif kind in ("challenge_offer", "notice"):
            self._side_message(message)

    def _game(self, spec: pb.GameSpec) -> Game[Any]:
        key = (spec.name, tuple(sorted(spec.params.items())))
        game = self._games.get(key)
        if game is None:
            game = self._games[key] = load_game(spec.name, **dict(spec.params))
        return game

    def _game_start(self, start: pb.GameStart) -> GameDriver:
        existing = self._drivers.get(start.game_id)
        if existing is not None:
            # A resumed session: the referee re-announces games already running, with every
            # move so far; tell the agent the ones it has not seen, in order (a course bot
            # rebuilds its own board from these updates).
            self._catch_up(existing, start.moves, start.position)
            return existing
        self._announce(start.info)
        # The agent is made at the bot's first move request (its clock runs: the course
        # charges the constructor too), or now by a catch-up.
        driver = self._new_driver(start.game_id, start.info)
        # A game this process did not know yet (it restarted and resumed): the moves so far.
        self._catch_up(driver, start.moves, start.position)
        if self.max_games is not None and self._started >= self.max_games:
            self._goodbye("played the requested number of games")
        return driver

    def _new_driver(self, game_id: str, info: pb.GameInfo) -> GameDriver:
        game = self._game(info.game)
        state = game.state_from_string(info.initial_position)
        game_info = game_info_of(game_id, info, game)
        driver = GameDriver(self.factory, game_info, game, state)
        self._drivers[game_id] = driver
        self._started += 1
        self.log(
            f"game {game_id}: {info.game.name}, playing {game_info.seat_name}"
            + (f" against {game_info.opponent}" if game_info.opponent else "")
        )
        return driver

    @staticmethod
    def _catch_up(driver: GameDriver, moves: Sequence[str], position: str) -> None:
        for text in moves[driver.seen :]:
            driver.accepted(driver.state.to_move, text, None)
        if position:
            driver.resync(position)

    def _move_request(self, req: pb.MoveRequest) -> None:
        driver = self._drivers.get(req.game_id)
        if driver is None:
            # Every game starts with a GameStart (also on a resume): a referee bug, not ours.
            self.log(f"ignored a move request for unknown game {req.game_id}")
            return
        self._hear_moves(driver, req)
        seat = driver.info.seat
        clocks = Clocks(
            time_left=_remaining(req.clocks, seat),
            opponent_time_left=_remaining(req.clocks, 1 - seat),
            move_limit=req.move_time_limit_s if req.HasField("move_time_limit_s") else None,
            increment=driver.info.increment,
        )
        self._thinking = req.game_id
        try:
            reply = driver.request(clocks, req.position or None)
        finally:
            self._thinking = None
        if req.game_id in self._over_early:
            return  # the game ended meanwhile (said when it did): nothing to send
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
            if reply.think is not None:
                move.think.CopyFrom(think_message(reply.think))
            self._answered[req.game_id] = (req.ply, reply.text)
        self._send(move=move)

    def _hear_moves(self, driver: GameDriver, req: pb.MoveRequest) -> None:
        """Tell the agent the moves accepted since its last turn: its own answer (the game
        went on, so the referee accepted it), then the request's ``last_move``. A gap neither
        fills is closed by the request's position (``driver.request`` resynchronises)."""
        last = req.last_move if req.HasField("last_move") else None
        own = self._answered.pop(req.game_id, None)
        if own is not None and own[0] == driver.seen and (last is None or last.ply > own[0]):
            driver.accepted(driver.info.seat, own[1], None)
        if last is not None and last.ply == driver.seen:
            driver.accepted(last.seat, last.action, last.position or None)

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

    def _over_while_thinking(self, over: pb.GameOver) -> None:
        """On the inbox's thread: a game ended while the agent thinks about its move there
        (stuck in a loop, say): say so now, the agent may never return."""
        driver = self._drivers.get(over.game_id)
        if driver is None or self._thinking != over.game_id:
            return
        self._over_early.add(over.game_id)
        self.log(over_while_thinking(result_of(over, driver.info)))

    def _game_over(self, over: pb.GameOver) -> None:
        self._over_early.discard(over.game_id)
        driver = self._drivers.pop(over.game_id, None)
        self._answered.pop(over.game_id, None)
        if driver is None:
            return
        result = result_of(over, driver.info)
        driver.finish(result, over.final_position or None)
        self.results.append(result)
        word = "aborted" if result.aborted else f"over: {over.result} {result.winner_name}"
        self.log(f"game {over.game_id} {word} ({over.reason})")
        if self.max_games is not None and len(self.results) >= self.max_games:
            self._done = True

    def _abandon_games(self, restarted: bool) -> None:
        """The referee did not resume our session: the games it was running are over to us.

        The same run of the referee ended them (a disconnect, which it scores as a loss); a
        referee that restarted in between never finished them (aborted, no result). Tell the
        agents so and count them, so that ``games=N`` still ends.
        """
        if restarted:
            self._end_unfinished(
                "the referee restarted while the connection was down: the game was never "
                "finished (no result)"
            )
        else:
            self._end_unfinished(
                "the connection to the referee dropped and the session was not resumed",
                lost=True,
            )
        if self.max_games is not None and len(self.results) >= self.max_games:
            self._goodbye("played the requested number of games")
            self._done = True

    def _end_unfinished(self, reason: str, lost: bool = False) -> None:
        """End every game still running here: aborted (no result, never a loss), or ``lost``
        by disconnect (the referee's own verdict after its reconnection window)."""
        verdict = Verdict.DISCONNECT if lost else Verdict.ABORTED
        for game_id, driver in list(self._drivers.items()):
            seat = driver.info.seat
            result = GameResult(
                game_id=game_id,
                seat=seat,
                winner=1 - seat if lost else None,
                verdict=verdict,
                termination=verdict,
                reason=reason,
                plies=driver.state.ply,
                seat_names=driver.info.seat_names,
            )
            driver.finish(result)
            self.results.append(result)
            self.log(f"game {game_id} {'lost' if lost else 'aborted'}: {reason}")
        self._drivers.clear()
        self._answered.clear()

    def _goodbye(self, reason: str) -> None:
        if not self._said_goodbye:
            self._said_goodbye = True
            self._send(goodbye=pb.Goodbye(reason=reason))
