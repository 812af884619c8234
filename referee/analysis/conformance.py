"""The conformance kit (``referee conformance -- COMMAND...``): what a correct bot client must
do, checked against the bot's own program on a local referee endpoint.

Two runs. In the first the kit welcomes the bot, sends it two messages it must survive (one of
no kind it knows, one move request for a game it is not playing), plays a Tetress game against
it (the kit is RED and moves at random, the bot BLUE), drops the connection after the bot's
fifth move and expects it back with its session, then ends the game, expects a move for the
first request of a next game (a session holds any number of games), ends that one too and says
goodbye. In the second it refuses the bot's token and expects it to stop. Each check names the
section of docs/protocol.md it comes from; a check an earlier failure kept from running is
reported as not checked (``SKIP``), never left out.
"""

from __future__ import annotations

import random
import secrets
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from client_sdk.proto import referee_pb2 as pb
from engine.errors import EngineError
from engine.tetress import Tetress, TetressState, random_move
from referee.analysis.conformance_wire import BotRun, KitServer, Stream, kit_session

DOC = "docs/protocol.md"
PROTOCOL_VERSION = pb.PROTOCOL_VERSION_CURRENT
#: A RefereeMessage carrying only field 1000 (a varint 1): no kind this protocol defines.
UNKNOWN_KIND = b"\xc0\x3e\x01"
#: The bot's move after which the kit drops the connection.
DROP_AFTER = 5
#: How long a bot may take to start and connect (an interpreter's imports on a busy machine).
CONNECT_S = 60.0
#: How long a dropped bot may take to come back (the SDK's first retry waits about 1 s).
RESUME_S = 15.0


#: Each check, in the report's order, and the section of docs/protocol.md it comes from (its
#: heading's anchor).
SECTIONS = {
    "start": "connecting",
    "handshake": "hello-and-welcome",
    "malformed message": "messages-a-client-does-not-understand",
    "reconnect": "reconnecting",
    "legal moves": "moves",
    "end of game": "ending",
    "refused token": "admission",
}
#: The checks of the first run, the game.
GAME_CHECKS = tuple(name for name in SECTIONS if name != "refused token")


@dataclass
class Check:
    """One line of the kit's report."""

    name: str
    ok: bool
    detail: str
    section: str
    skipped: bool = False

    def line(self) -> str:
        if self.skipped:
            return f"SKIP {self.name}: {self.detail}"
        mark = "PASS" if self.ok else "FAIL"
        where = "" if self.ok else f" [{DOC}#{self.section}]"
        return f"{mark} {self.name}: {self.detail}{where}"


@dataclass
class Report:
    """Every check of a kit run, in order."""

    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, ok: bool, detail: str) -> bool:
        self.checks.append(Check(name, ok, detail, SECTIONS[name]))
        return ok

    def skip(self, names: tuple[str, ...], why: str) -> None:
        """Report each of ``names`` not reported yet as not checked (a failure), for ``why``."""
        done = {c.name for c in self.checks}
        for name in names:
            if name not in done:
                self.checks.append(Check(name, False, f"not checked: {why}", SECTIONS[name], True))
        order = list(SECTIONS)
        self.checks.sort(key=lambda c: order.index(c.name))

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def as_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [asdict(c) for c in self.checks]}


@dataclass
class Game:
    """The game the kit plays with the bot, and where it stands."""

    move_time_s: float
    state: TetressState = field(default_factory=lambda: Tetress().new_state())
    moves: list[str] = field(default_factory=list)
    game_id: str = field(default_factory=lambda: f"conformance-{secrets.token_hex(4)}")
    bot_moves: int = 0
    slowest_s: float = 0.0
    #: Why the bot lost the game (an illegal, wrong or missing move), else empty.
    failure: str = ""
    #: Why the kit stopped the game without a result (a failed reconnect), else empty.
    stopped: str = ""
    #: The ply of a request the bot did not answer in time (its late answer is no fault of
    #: the end of the game), else -1.
    unanswered: int = -1

    def start_message(self, resumed: bool) -> pb.RefereeMessage:
        info = pb.GameInfo(
            game=pb.GameSpec(name="tetress"),
            seat=1,
            seat_names=["RED", "BLUE"],
            time_control=pb.TimeControl(move_time_s=self.move_time_s, grace_s=1.0, clock="wall"),
            memory_limit_bytes=250 * 2**20,
            initial_position=Tetress().new_state().to_string(),
            players=[pb.Player(name="conformance-kit"), pb.Player(name="bot")],
        )
        start = pb.GameStart(game_id=self.game_id, info=info)
        if resumed:
            start.moves.extend(self.moves)
            start.position = self.state.to_string()
        return pb.RefereeMessage(game_start=start)

    def request(self) -> pb.RefereeMessage:
        ply = len(self.moves)
        req = pb.MoveRequest(
            game_id=self.game_id,
            ply=ply,
            position=self.state.to_string(),
            move_time_limit_s=self.move_time_s,
            clocks=[pb.Clock(seat_name="RED"), pb.Clock(seat_name="BLUE")],
        )
        if self.moves:
            req.last_move.CopyFrom(pb.MovePlayed(ply=ply - 1, seat=0, action=self.moves[-1]))
        return pb.RefereeMessage(move_request=req)

    def play(self, text: str) -> None:
        move = self.state.game.move_from_text(text)
        self.state.apply(move)
        self.moves.append(self.state.game.move_to_text(move))

    def over_message(self) -> pb.RefereeMessage:
        outcome = self.state.outcome()
        over = pb.GameOver(game_id=self.game_id, plies=len(self.moves))
        over.final_position = self.state.to_string()
        over.last_action = self.moves[-1] if self.moves else ""
        if self.failure or outcome is None:
            lost = pb.VERDICT_TIME if self.unanswered >= 0 else pb.VERDICT_ILLEGAL_MOVE
            over.verdict = lost if self.failure else pb.VERDICT_ABORTED
            over.result, over.reason = ("1-0", self.failure) if self.failure else ("*", "stopped")
            over.offender_seat = 1
            return pb.RefereeMessage(game_over=over)
        over.verdict = pb.VERDICT_NORMAL
        over.termination = outcome.termination.value
        over.result = {0: "1-0", 1: "0-1", None: "1/2-1/2"}[outcome.winner]
        if outcome.winner is not None:
            over.winner_seat = outcome.winner
        return pb.RefereeMessage(game_over=over)


async def run_kit(argv: list[str], move_time_s: float = 5.0) -> Report:
    """Both runs of the kit against the bot started by ``argv``."""
    report = Report()
    await _game_run(argv, move_time_s, report)
    await _refused_run(argv, report)
    return report


async def _game_run(argv: list[str], move_time_s: float, report: Report) -> None:
    token = f"kit-{secrets.token_hex(8)}"
    async with kit_session(argv, token) as (server, bot):
        stream = await _connect(server, bot, report)
        if stream is None:
            report.skip(GAME_CHECKS, "the bot never opened a stream")
            return
        hello = await _first_message(stream)
        if not _check_hello(report, hello, token):
            stream.close()
            report.skip(GAME_CHECKS, "the handshake failed")
            return
        session = secrets.token_hex(8)
        await stream.send(_welcome(session))
        await stream.send(UNKNOWN_KIND)
        await stream.send(_stray_request())
        game = Game(move_time_s)
        await stream.send(game.start_message(resumed=False))
        last = await _play(server, stream, bot, game, session, token, report)
        if last is None:
            code = await bot.exit_code(0.5)
            gone = "still running" if code is None else f"it exited with status {code}"
            report.skip(GAME_CHECKS, f"the bot did not come back after the drop ({gone})")
            return
        await _finish(last, bot, game, report)


async def _connect(server: KitServer, bot: BotRun, report: Report) -> Stream | None:
    problem = await bot.start()
    if problem:
        report.add("start", False, f"the command did not start: {problem}")
        return None
    stream = await server.next_stream(CONNECT_S, bot)
    if stream is None:
        code = await bot.exit_code(0.5)
        how = f"it exited with status {code}" if code is not None else f"in {CONNECT_S:g} s"
        detail = f"no Play stream opened ({how}); {bot.tail()}"
        report.add("start", False, detail)
        return None
    report.add("start", True, "opened a Play stream to TETROMINO_SERVER")
    return stream


async def _first_message(stream: Stream) -> pb.BotMessage | None:
    try:
        return await stream.receive(15.0)
    except TimeoutError:
        return None


def _check_hello(report: Report, hello: pb.BotMessage | None, token: str) -> bool:
    name = "handshake"
    if hello is None or not hello.HasField("hello"):
        return report.add(name, False, "the first message was not a Hello")
    h = hello.hello
    if h.protocol_version != PROTOCOL_VERSION:
        detail = f"Hello.protocol_version is {h.protocol_version}, not {PROTOCOL_VERSION}"
        return report.add(name, False, detail)
    if h.token != token:
        return report.add(name, False, "Hello.token is not the token given")
    detail = f"Hello with protocol version {h.protocol_version} and the token given"
    return report.add(name, True, detail)


def _welcome(session: str) -> pb.RefereeMessage:
    welcome = pb.Welcome(
        session_id=session,
        server_version="conformance-kit",
        protocol_version=PROTOCOL_VERSION,
        games=["tetress"],
        server_run="conformance-run",
    )
    return pb.RefereeMessage(welcome=welcome)


def _stray_request() -> pb.RefereeMessage:
    req = pb.MoveRequest(game_id="no-such-game", ply=0, position=Tetress().new_state().to_string())
    return pb.RefereeMessage(move_request=req)


async def _answer(
    stream: Stream, game: Game, stale: tuple[str, int] = ("", -1)
) -> tuple[pb.Move | None, str]:
    """The bot's move for the current request (non-fatal errors it sends, and a late answer
    ``stale`` = (game id, ply) to a request that timed out, are passed over)."""
    deadline = time.monotonic() + game.move_time_s + 1.0
    while True:
        try:
            message = await stream.receive(max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            game.unanswered = len(game.moves)
            return None, f"no move within {game.move_time_s + 1.0:g} s"
        if message is None:
            return None, "the bot closed its stream"
        kind = message.WhichOneof("kind")
        if kind == "error" and not message.error.fatal:
            continue
        if kind != "move":
            return None, f"a {kind or 'message of no kind'} instead of a move"
        if (message.move.game_id, message.move.ply) == stale:
            continue
        if message.move.game_id != game.game_id:
            return None, f"a move for game {message.move.game_id!r}, which it is not playing"
        return message.move, ""


async def _play(
    server: KitServer,
    stream: Stream,
    bot: BotRun,
    game: Game,
    session: str,
    token: str,
    report: Report,
) -> Stream | None:
    """Play the game; the stream it ended on (None when the bot did not come back)."""
    rng = random.Random(7)
    current: Stream | None = stream
    while game.state.outcome() is None and not (game.failure or game.stopped):
        if game.state.to_move == 0:
            game.play(game.state.game.move_to_text(random_move(game.state, rng)))
            continue
        if game.bot_moves == DROP_AFTER:
            current = await _resume(server, stream, bot, game, (session, token), report)
            if current is None or game.stopped:
                break
            stream = current
        else:
            await stream.send(game.request())
        sent = time.monotonic()
        move, problem = await _answer(stream, game)
        game.slowest_s = max(game.slowest_s, time.monotonic() - sent)
        if game.bot_moves == 0:
            _check_survived(report, problem)
        if move is None or not _legal(game, move):
            game.failure = problem or game.failure
            break
        game.bot_moves += 1
    _check_moves(report, game, bot)
    report.skip(("reconnect",), f"the game stopped before the bot's move {DROP_AFTER + 1}")
    return current


def _legal(game: Game, move: pb.Move) -> bool:
    ply = len(game.moves)
    if move.ply != ply:
        game.failure = f"Move.ply {move.ply} for the request of ply {ply}"
        return False
    try:
        game.play(move.action)
    except EngineError as exc:
        game.failure = f"illegal move {move.action!r} at ply {ply}: {exc}"
        return False
    return True


def _check_survived(report: Report, problem: str) -> None:
    ok = not problem
    detail = (
        "kept playing after a message of no known kind and a request for an unknown game"
        if ok
        else f"after a message of no known kind and a request for an unknown game: {problem}"
    )
    report.add("malformed message", ok, detail)


def _check_moves(report: Report, game: Game, bot: BotRun) -> None:
    if game.failure:
        tail = bot.tail()
        report.add("legal moves", False, f"{game.failure}; {tail}" if tail else game.failure)
        return
    detail = (
        f"{game.bot_moves} legal moves, each within its {game.move_time_s:g} s "
        f"(slowest {game.slowest_s:.3f} s)"
    )
    if game.stopped:
        detail += f"; {game.stopped}"
    report.add("legal moves", True, detail)


async def _resume(
    server: KitServer, old: Stream, bot: BotRun, game: Game, ids: tuple[str, str], report: Report
) -> Stream | None:
    """Drop ``old`` and take the bot back: its new stream (resumed, or welcomed to a new
    session with ``game.stopped`` set when it came back without its own), else None."""
    session, token = ids
    old.close(drop=True)
    stream = await server.next_stream(RESUME_S, bot)
    name = "reconnect"
    if stream is None:
        code = await bot.exit_code(0.5)
        how = f"it exited with status {code}" if code is not None else f"in {RESUME_S:g} s"
        report.add(name, False, f"no new stream after a drop ({how}); {bot.tail()}")
        game.stopped = "the game stopped at the failed reconnect"
        return None
    message = await _first_message(stream)
    hello = message.hello if message is not None and message.HasField("hello") else None
    if hello is None or hello.resume_session_id != session or hello.token != token:
        got = "no Hello" if hello is None else f"resume_session_id {hello.resume_session_id!r}"
        if hello is not None and hello.token != token:
            got += " and another token"
        report.add(name, False, f"came back with {got}, not its session {session!r}")
        await stream.send(_welcome(secrets.token_hex(8)))
        game.stopped = "the game stopped at the failed reconnect"
        return stream
    await stream.send(_welcome(session))
    await stream.send(game.start_message(resumed=True))
    await stream.send(game.request())
    report.add(name, True, "came back with its session id and the same token")
    return stream


async def _finish(stream: Stream, bot: BotRun, game: Game, report: Report) -> None:
    """End the game, play the first request of a next one, end it, say goodbye."""
    await stream.send(game.over_message())
    after = await _next_game(stream, game)
    if not after:
        await stream.send(pb.RefereeMessage(goodbye=pb.Goodbye(reason="conformance kit: done")))
        try:
            while (message := await stream.receive(10.0)) is not None:
                if message.WhichOneof("kind") == "move":
                    after = "sent a move after Goodbye; "
                    break
        except TimeoutError:
            after = "kept its stream open after Goodbye; "
    stream.close()
    code = await bot.exit_code(10.0)
    ok = not after and code == 0
    detail = (
        "played a next game's first move after GameOver, then closed its stream and exited "
        "with status 0 after Goodbye"
        if ok
        else f"{after}{'still running' if code is None else f'exited with status {code}'}"
    )
    report.add("end of game", ok, detail)


async def _next_game(stream: Stream, game: Game) -> str:
    """Start a next game after ``game``'s GameOver and end it after the bot's first move:
    empty, or what went wrong."""
    following = Game(game.move_time_s)
    following.play(
        following.state.game.move_to_text(random_move(following.state, random.Random(3)))
    )
    await stream.send(following.start_message(resumed=False))
    await stream.send(following.request())
    move, problem = await _answer(stream, following, (game.game_id, game.unanswered))
    if move is not None and move.ply != 1:
        problem = f"Move.ply {move.ply} for the request of ply 1"
    if problem:
        return f"after GameOver, at the next game's request: {problem}; "
    await stream.send(following.over_message())
    return ""


async def _refused_run(argv: list[str], report: Report) -> None:
    name = "refused token"
    async with kit_session(argv, "kit-wrong-token") as (server, bot):
        if await bot.start() or (stream := await server.next_stream(CONNECT_S, bot)) is None:
            report.add(name, False, "the bot never connected")
            return
        await _first_message(stream)
        error = pb.Error(
            code=pb.ERROR_CODE_UNAUTHENTICATED, fatal=True, message="unknown token (kit)"
        )
        await stream.send(pb.RefereeMessage(error=error))
        stream.close()
        code = await bot.exit_code(20.0)
        again = server.opened > 1
        ok = code not in (None, 0) and not again
        detail = (
            f"stopped with status {code} after a fatal UNAUTHENTICATED"
            if ok
            else "after a fatal UNAUTHENTICATED: "
            + ("tried again; " if again else "")
            + ("still running" if code is None else f"exited with status {code}")
        )
        report.add(name, ok, detail)
