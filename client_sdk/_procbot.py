"""The referee's side of a bot run in its own process by ``python -m client_sdk play`` (the
bot's side is :mod:`client_sdk._child`).

The bot is a subprocess, so whatever it does is a verdict of the game, never the end of the
command: a crash (the process ends) is a runtime error, a hang is a loss on time (the process
is killed once its allowance and grace are spent), memory above the limit is a memory verdict
(its resident memory, process and children, is sampled with psutil while it thinks). Time is
the wall time from sending the request to reading the answer, as at the referee.

Nothing here is a sandbox: the bot runs with the user's own rights, files and network.
Everything used is portable (``subprocess``, threads, a queue, psutil), so it runs the same on
Linux, macOS and Windows.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import IO, Any

import psutil

from client_sdk._agent import Clocks, GameInfo, GameResult
from client_sdk._errors import SdkError
from engine.adjudication import (
    Answer,
    BotFailed,
    Measured,
    MoveAnswer,
    NotAMove,
    TimedOut,
    verdicts,
)
from engine.adjudication.verdicts import Verdict
from engine.records.search import SearchInfo

#: How long loading a bot (importing its code) may take before the command gives up on it.
LOAD_TIMEOUT_S = 120.0
#: How often a thinking bot's memory is sampled.
SAMPLE_S = 0.02
#: How long a finished bot may take to exit before it is killed.
EXIT_WAIT_S = 5.0
#: Lines of a bot's stderr kept for the crash sentence.
TAIL_LINES = 20
#: The module a bot process runs (``python -m CHILD_MODULE BOT``): the bot's side of the pipes.
CHILD_MODULE = "client_sdk._child"


class BotStartError(SdkError):
    """The bot could not be started or loaded; the message is one line saying why."""


@dataclass(frozen=True, slots=True)
class BotCommand:
    """How to start a bot's process other than ``python -m client_sdk._child BOT`` here: e.g.
    a sandbox's command line that runs that child inside it (the referee's lesson runs).

    ``env`` is the process's whole environment; ``user``/``group`` the ids it runs as."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    pass_fds: tuple[int, ...] = ()
    cwd: str | None = None
    user: int | None = None
    group: int | None = None


class ProcessBot:
    """One bot process, playing one game after another for ``name`` (e.g. ``RED``)."""

    def __init__(
        self,
        bot: str,
        *,
        label: str,
        echo: bool = True,
        child: str = CHILD_MODULE,
        env: dict[str, str] | None = None,
        command: BotCommand | None = None,
        on_start: Callable[[Callable[[], None]], None] | None = None,
    ) -> None:
        self.bot = bot
        self.label = label
        self._echo = echo
        if command is None:
            env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
            command = BotCommand((sys.executable, "-m", child, bot), env)
        self.proc = subprocess.Popen(
            list(command.argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env=dict(command.env),
            pass_fds=command.pass_fds,
            cwd=command.cwd,
            user=command.user,
            group=command.group,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin: IO[str] = self.proc.stdin
        self._replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._threads = [
            threading.Thread(target=self._read_replies, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        #: Peak resident memory seen while this bot thought, bytes (0: not measured).
        self.peak_rss = 0
        self.memory_measured = True
        #: The bot's own measure of its last move's thinking time.
        self.last_think = 0.0
        #: The think record of its last move (None: it said nothing).
        self.last_search: SearchInfo | None = None
        if on_start is not None:  # before loading, which may take long: a caller may end it
            on_start(self.kill)
        self._ready()

    # -- the process's two output streams -------------------------------------------------------

    def _read_replies(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                self._replies.put(json.loads(line))
            except ValueError:
                continue
        self._replies.put(None)  # end of stream: the process is gone

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.tail.append(line.rstrip("\n"))
            if self._echo:
                print(f"[{self.label}] {line.rstrip()}", file=sys.stderr, flush=True)

    def _ready(self) -> None:
        try:
            reply = self._replies.get(timeout=LOAD_TIMEOUT_S)
        except queue.Empty:
            self.kill()
            raise BotStartError(f"{self.bot}: not loaded within {LOAD_TIMEOUT_S:g} s") from None
        if reply is None or not reply.get("ready"):
            self.kill()
            why = reply.get("load_error") if reply else self._exit_text()
            raise BotStartError(str(why))

    # -- a game -----------------------------------------------------------------------------------

    def start(self, info: GameInfo, position: str) -> None:
        self._write({"op": "start", "info": asdict(info), "position": position})

    def accepted(self, seat: int, text: str) -> None:
        self._write({"op": "accepted", "seat": seat, "text": text})

    def finish(self, result: GameResult, position: str) -> None:
        raw = asdict(result)
        raw["verdict"] = str(result.verdict)
        raw["termination"] = str(result.termination)
        self._write({"op": "end", "result": raw, "position": position})

    def request(
        self, seat_name: str, clocks: Clocks, position: str, deadline: float | None, limit: int
    ) -> Answer:
        """Ask for a move; the adjudicator's answer: the move, or what went wrong.
        ``deadline``: seconds until the bot is out of time; ``limit``: memory bytes (0: none)."""
        request = {"op": "move", "clocks": asdict(clocks), "position": position}
        return self.ask(request, seat_name, deadline, limit)

    def ask(
        self, request: dict[str, Any], seat_name: str, deadline: float | None, limit: int
    ) -> Answer:
        """Send ``request`` and wait for its answer, as :meth:`request` does."""
        began = time.perf_counter()
        if not self._write(request):
            return self._crashed(seat_name)
        while True:
            elapsed = time.perf_counter() - began
            if deadline is not None and elapsed > deadline:
                self.kill()
                return TimedOut(elapsed)
            wait = SAMPLE_S if deadline is None else min(SAMPLE_S, max(0.0, deadline - elapsed))
            try:
                reply = self._replies.get(timeout=wait)
            except queue.Empty:
                rss = self._sample()
                if limit and rss > limit:
                    self.kill()
                    return Measured(Verdict.MEMORY, _memory(seat_name, rss, limit))
                continue
            elapsed = time.perf_counter() - began
            if reply is None:
                return self._crashed(seat_name)
            self.last_think = float(reply.get("think") or 0.0)
            self.last_search = _search(reply.get("search"))
            # A bot that allocates and answers between two samples reports its own peak.
            peak = max(int(reply.get("peak") or 0), self._sample())
            self.peak_rss = max(self.peak_rss, peak)
            if limit and peak > limit and self.memory_measured:
                return Measured(Verdict.MEMORY, _memory(seat_name, peak, limit))
            return _answer(reply, elapsed)

    # -- the process ------------------------------------------------------------------------------

    def tell(self, message: dict[str, Any]) -> bool:
        """Send a message that has no answer; False if the process is gone."""
        return self._write(message)

    def _write(self, message: dict[str, Any]) -> bool:
        try:
            self._stdin.write(json.dumps(message) + "\n")
            self._stdin.flush()
        except (OSError, ValueError):
            return False
        return True

    def _sample(self) -> int:
        """The bot's resident memory now, with its children's (0: not measured here)."""
        if not self.memory_measured:
            return 0
        try:
            process = psutil.Process(self.proc.pid)
            rss = process.memory_info().rss
            rss += sum(c.memory_info().rss for c in process.children(recursive=True))
        except psutil.NoSuchProcess:
            return 0
        except (psutil.AccessDenied, NotImplementedError, OSError) as exc:
            self.memory_measured = False
            print(
                f"note: the memory of {self.label} cannot be measured on this platform "
                f"({type(exc).__name__}): its memory limit is not enforced here",
                file=sys.stderr,
            )
            return 0
        self.peak_rss = max(self.peak_rss, rss)
        return int(rss)

    def _crashed(self, seat_name: str) -> Measured:
        self._reap()
        last = next((line.strip() for line in reversed(self.tail) if line.strip()), "")
        sentence = f"{seat_name}'s bot crashed ({self._exit_text()})"
        return Measured(Verdict.RUNTIME_ERROR, sentence + (f": {last[:200]}" if last else ""))

    def _exit_text(self) -> str:
        code = self.proc.poll()
        if code is None:
            return "still running"
        return f"exit code {code}" if code >= 0 else f"killed by signal {-code}"

    def kill(self) -> None:
        """Kill the bot and every process it started (a command bot under a relay)."""
        if self.proc.poll() is None:
            with contextlib.suppress(psutil.Error):
                for child in psutil.Process(self.proc.pid).children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        child.kill()
            self.proc.kill()
            self.proc.wait()

    def close(self) -> None:
        """Let the bot exit (its stdin closes); kill it if it does not."""
        with contextlib.suppress(OSError):
            self._stdin.close()
        self._reap()

    def _reap(self) -> None:
        """Wait for the bot to exit (killing it if it does not) and for its reader threads."""
        try:
            self.proc.wait(timeout=EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            self.kill()
        for thread in self._threads:
            thread.join(timeout=1.0)


def _memory(seat_name: str, rss: int, limit: int) -> str:
    return verdicts.memory_sentence(seat_name, rss, limit, "resident memory, measured locally")


def _search(sent: object) -> SearchInfo | None:
    """A move's think record as the child sent it (None: none, or not one)."""
    if not isinstance(sent, dict):
        return None
    try:
        search = SearchInfo(
            **{k: sent.get(k) for k in ("depth", "nodes", "score")},
            pv=tuple(sent.get("pv") or ()),
            text=str(sent.get("text") or ""),
        )
    except (TypeError, ValueError):
        return None
    return None if search.empty else search


def _answer(reply: dict[str, Any], elapsed: float) -> Answer:
    peak = int(reply.get("peak") or 0)
    if reply.get("error") is not None:
        return BotFailed(str(reply["error"]))
    if reply.get("text") is None:
        return NotAMove(
            str(reply.get("not_a_move") or "None"), reply.get("expected", ""), elapsed, peak
        )
    return MoveAnswer(str(reply["text"]), elapsed, peak)
