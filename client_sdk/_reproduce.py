"""``python -m client_sdk reproduce PACK BOT``: replay a failure pack against a bot here.

The bot runs in its own process (:mod:`client_sdk._replay`), is given the pack's seed, and
is sent exactly the messages the referee sent it in the game, under the game's recorded
limits. Its answers are judged by the referee's own :class:`Adjudicator`, so the verdict it
reaches here is worded as the server words it. The opponent's moves are the ones the bot
was told of (each request's ``last_move``); nothing else of the opponent is known here.
"""

from __future__ import annotations

import base64
import contextlib
import sys
from dataclasses import dataclass

from client_sdk._errors import SdkError
from client_sdk._messages import action_problem
from client_sdk._pack import Pack
from client_sdk._procbot import ProcessBot
from client_sdk._seed import SEED_ENV
from client_sdk.proto import referee_pb2 as pb
from engine.adjudication import (
    Accepted,
    Adjudicator,
    GameEnd,
    Measured,
    MoveAnswer,
    ProtocolViolation,
    TimeControl,
    Verdict,
)
from engine.registry import load_game

#: Verdicts the server may reach for what a local process shows as another (a remote bot
#: whose process ended is a disconnect at the referee, a crash here).
SAME = {Verdict.DISCONNECT: {Verdict.DISCONNECT, Verdict.RUNTIME_ERROR}}


class CannotReplay(SdkError):
    """The pack cannot be replayed as recorded; the message is one line saying why."""


@dataclass(frozen=True, slots=True)
class Replayed:
    """What the bot did here: the verdict it reached (None: none), at which ply, and how
    many of its answers differed from the recorded ones before that."""

    verdict: Verdict | None
    reason: str
    ply: int | None
    answers: int
    differed: int

    def matches(self, pack: Pack) -> bool:
        """The same verdict (or its local equivalent) at the same ply as recorded."""
        if self.verdict is None:
            return False
        recorded = Verdict(pack.verdict)
        same = self.verdict in SAME.get(recorded, {recorded})
        return same and (pack.fault_ply is None or self.ply == pack.fault_ply)


def _control(pack: Pack) -> tuple[TimeControl, int]:
    limits = pack.limits
    control = TimeControl(
        game_time_s=float(limits.get("game_time_s") or 0.0),
        move_time_s=float(limits.get("move_time_s") or 0.0),
        increment_s=float(limits.get("increment_s") or 0.0),
        grace_s=float(limits.get("grace_s") or 0.0),
    )
    return control, int(limits.get("memory_limit_bytes") or 0)


def _recorded_answers(pack: Pack) -> dict[int, str]:
    """The bot's recorded move text per ply (what it answered in the game)."""
    out: dict[int, str] = {}
    for entry in pack.raw["messages"]:
        if isinstance(entry, dict) and isinstance(entry.get("from_bot"), str):
            move = pb.Move.FromString(base64.b64decode(entry["from_bot"]))
            out.setdefault(move.ply, move.action)
    return out


class Replayer:
    """Replays one pack against one bot process."""

    def __init__(self, pack: Pack, bot: str, *, debug_ply: int | None, until: int | None) -> None:
        self.pack = pack
        self.seat = pack.seat
        try:
            rules = load_game(pack.raw["game"], **dict(pack.raw["params"]))
        except Exception as exc:  # an unknown game or parameter: said in one line
            raise CannotReplay(f"the pack's game cannot be loaded here: {exc}") from None
        self.control, self.memory = _control(pack)
        self.judge = Adjudicator(
            rules,
            control=self.control,
            memory_limit_bytes=self.memory,
            judged_memory=(False, False),
        )
        self.judge.play_book([str(m) for m in pack.raw.get("opening") or ()])
        self.debug_ply = debug_ply
        self.until = until
        self.expected = _recorded_answers(pack)
        env = {} if pack.seed is None else {SEED_ENV: str(pack.seed)}
        self.bot = ProcessBot(bot, label=pack.seat_name, child="client_sdk._replay", env=env)
        self.answers = 0
        self.differed = 0
        #: The bot is left running at ``until`` for a debugger.
        self.holding = False
        self._debugged = False

    def run(self) -> Replayed:
        """Send every recorded message (up to ``until``); the bot is ended after, unless it
        is left running at ``until`` (:attr:`holding`)."""
        try:
            for message in self.pack.sent:
                kind = message.WhichOneof("kind")
                if kind == "move_request":
                    ply = message.move_request.ply
                    if self.until is not None and ply >= self.until:
                        self.holding = True
                        return self._result(None, f"stopped before ply {ply} (--until)", ply)
                    end = self._request(message)
                    if end is not None:
                        return end
                elif not self.bot.tell(_line(message)):
                    break
            return self._after_the_last()
        finally:
            if not self.holding:
                self.bot.kill()

    def _request(self, message: pb.RefereeMessage) -> Replayed | None:
        req = message.move_request
        self._opponent_moves(req)
        turn = self.judge.turn()
        if isinstance(turn, GameEnd) or turn.seat != self.seat or turn.ply != req.ply:
            raise CannotReplay(f"the recorded messages skip a move before ply {req.ply}")
        debug = not self._debugged and self.debug_ply is not None and req.ply >= self.debug_ply
        self._debugged = self._debugged or debug
        deadline = None if debug else turn.allowance.deadline
        request = _line(message, debug=debug)
        answer = self.bot.ask(request, self.pack.seat_name, deadline, 0 if debug else self.memory)
        if isinstance(answer, MoveAnswer) and action_problem(answer.text) is not None:
            answer = ProtocolViolation(action_problem(answer.text) or "")
        decision = self.judge.judge(self.seat, answer)
        if isinstance(decision, GameEnd):
            return self._result(decision.verdict, decision.reason, req.ply)
        self._compare(req.ply, decision, answer)
        return None

    def _opponent_moves(self, req: pb.MoveRequest) -> None:
        """Play the opponent's move the request announces, as recorded."""
        if not req.HasField("last_move") or req.last_move.seat == self.seat:
            return
        last = req.last_move
        turn = self.judge.turn()
        if isinstance(turn, GameEnd) or turn.ply != last.ply:
            return
        decision = self.judge.judge(turn.seat, MoveAnswer(last.action, last.time_s, 0))
        if isinstance(decision, GameEnd):
            raise CannotReplay(f"the opponent's recorded move at ply {last.ply} is refused here")

    def _compare(self, ply: int, accepted: Accepted, answer: object) -> None:
        self.answers += 1
        recorded = self.expected.get(ply)
        spoken = answer.text if isinstance(answer, MoveAnswer) else accepted.text
        if recorded is not None and recorded != spoken:
            self.differed += 1

    def _after_the_last(self) -> Replayed:
        """Every message was sent without a fault: a process that ended since is a crash."""
        code = self.bot.proc.poll()
        if code is not None:
            crash = self.bot._crashed(self.pack.seat_name)
            assert isinstance(crash, Measured)
            return self._result(crash.verdict, crash.sentence, self.judge.state.ply)
        return self._result(None, "the bot answered every recorded request", None)

    def _result(self, verdict: Verdict | None, reason: str, ply: int | None) -> Replayed:
        return Replayed(verdict, reason, ply, self.answers, self.differed)


def _line(message: pb.RefereeMessage, *, debug: bool = False) -> dict[str, object]:
    data = base64.b64encode(message.SerializeToString()).decode("ascii")
    return {"data": data, "debug": debug}


def hold(bot: ProcessBot, ply: int) -> None:
    """``--until``: leave the bot running at ``ply`` until the user presses Enter."""
    print(
        f"replayed the requests before ply {ply}; the bot is waiting (pid {bot.proc.pid}): "
        "attach a debugger, then press Enter here to end it",
        file=sys.stderr,
        flush=True,
    )
    with contextlib.suppress(KeyboardInterrupt):
        sys.stdin.readline()
    bot.kill()
