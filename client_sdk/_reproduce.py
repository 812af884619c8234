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
from client_sdk._pack import MAX_TEXT, Pack
from client_sdk._procbot import ProcessBot
from client_sdk._seed import SEED_ENV
from client_sdk.proto import referee_pb2 as pb
from engine.adjudication import (
    Adjudicator,
    Answer,
    GameEnd,
    Measured,
    MoveAnswer,
    NotAMove,
    ProtocolViolation,
    TimeControl,
    ply_number,
)
from engine.adjudication.verdicts import Verdict
from engine.registry import load_game

#: Verdicts the server may reach for what a local process shows as another (a remote bot
#: whose process ended is a disconnect at the referee, a crash here).
SAME = {Verdict.DISCONNECT: {Verdict.DISCONNECT, Verdict.RUNTIME_ERROR}}


class CannotReplay(SdkError):
    """The pack cannot be replayed as recorded; the message is one line saying why."""


@dataclass(frozen=True, slots=True)
class Diverged:
    """The first answer of the bot's that differed from the game's: at ``ply``, the game's
    answer ``recorded`` and this one's ``replayed``. Nothing after it is judged: the game never
    reached the position the replayed answer would lead to."""

    ply: int
    recorded: str
    replayed: str


@dataclass(frozen=True, slots=True)
class Replayed:
    """What the bot did here: the verdict it reached (None: none), at which ply, how many of
    its answers were judged, and where it first answered otherwise than in the game (None:
    never)."""

    verdict: Verdict | None
    reason: str
    ply: int | None
    answers: int
    diverged: Diverged | None = None

    def matches(self, pack: Pack) -> bool:
        """The same verdict (or its local equivalent) at the same ply as recorded."""
        if self.verdict is None or self.diverged is not None:
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
    """What the bot answered in the game per ply, as :func:`_said` words it."""
    out: dict[int, str] = {}
    for entry in pack.raw["messages"]:
        if isinstance(entry, dict) and isinstance(entry.get("from_bot"), str):
            move = pb.Move.FromString(base64.b64decode(entry["from_bot"]))
            nam = move.not_a_move
            said = _not_a_move(nam.returned) if move.HasField("not_a_move") else move.action
            out.setdefault(move.ply, said)
    return out


def _not_a_move(returned: str) -> str:
    return f"not a move ({returned or 'None'})"


def _said(answer: Answer) -> str | None:
    """The answer's words, to compare with the game's (None: no answer, e.g. a crash)."""
    if isinstance(answer, MoveAnswer):
        return answer.text[: MAX_TEXT + 1]  # as much as a pack keeps
    if isinstance(answer, NotAMove):
        return _not_a_move(answer.returned)
    return None


class Replayer:
    """Replays one pack against one bot process."""

    def __init__(
        self,
        pack: Pack,
        bot: str,
        *,
        debug_ply: int | None,
        until: int | None,
        command: bool = False,
    ) -> None:
        """``command``: ``bot`` is a shell command (a bot in any language, over gRPC)."""
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
        child = "client_sdk._replay_command" if command else "client_sdk._replay"
        self.bot = ProcessBot(bot, label=pack.seat_name, child=child, env=env)
        self.answers = 0
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
                    ply = ply_number(message.move_request.ply)
                    if self.until is not None and ply >= self.until:
                        self.holding = True
                        until = self.until
                        return self._result(None, f"stopped before ply {until} (--until)", until)
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
        ply = ply_number(req.ply)
        self._opponent_moves(req)
        turn = self.judge.turn()
        if isinstance(turn, GameEnd) or turn.seat != self.seat or turn.ply != req.ply:
            raise CannotReplay(f"the recorded messages skip a move before ply {ply}")
        debug = not self._debugged and self.debug_ply is not None and ply >= self.debug_ply
        self._debugged = self._debugged or debug
        deadline = None if debug else turn.allowance.deadline
        request = _line(message, debug=debug)
        answer = self.bot.ask(request, self.pack.seat_name, deadline, 0 if debug else self.memory)
        recorded, said = self.expected.get(req.ply), _said(answer)
        if recorded is not None and said is not None and said != recorded:
            # From here on the bot plays another game than the one recorded: say so, and
            # judge nothing of a position the game never reached.
            diverged = Diverged(ply, recorded, said)
            reason = f"diverged at ply {ply}: the game's answer was {recorded}, here {said}"
            return Replayed(None, reason, ply, self.answers, diverged)
        if isinstance(answer, MoveAnswer) and action_problem(answer.text) is not None:
            answer = ProtocolViolation(action_problem(answer.text) or "")
        decision = self.judge.judge(self.seat, answer)
        if isinstance(decision, GameEnd):
            return self._result(decision.verdict, decision.reason, ply)
        self.answers += 1
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
            raise CannotReplay(
                f"the opponent's recorded move at ply {ply_number(last.ply)} is refused here"
            )

    def _after_the_last(self) -> Replayed:
        """Every message was sent without a fault: a process that ended since is a crash."""
        code = self.bot.proc.poll()
        if code is not None:
            crash = self.bot._crashed(self.pack.seat_name)
            assert isinstance(crash, Measured)
            return self._result(crash.verdict, crash.sentence, ply_number(self.judge.state.ply))
        return self._result(None, "the bot answered every recorded request", None)

    def _result(self, verdict: Verdict | None, reason: str, ply: int | None) -> Replayed:
        return Replayed(verdict, reason, ply, self.answers)


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
