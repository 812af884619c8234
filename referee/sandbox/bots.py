"""A bot to launch and a launched one: what the cold launch (:mod:`.launch`) and the warm
sandboxes (:mod:`.warm`) both start and hand back.

A bot is given as one of:

* a course-style package directory (``path/to/pkg`` or ``path/to/pkg:ClassName``), a Python
  file (``bot.py[:Name]``) or an SDK module (``client_sdk.examples.random_bot[:Name]``): run
  through the SDK's runner, ``python -m client_sdk --server HOST:PORT --token T BOT``;
* a shell command (anything else, e.g. ``"./mybot --fast"``; ``cmd:`` forces it), run with
  ``{server}`` and ``{token}`` replaced and with ``TETROMINO_SERVER`` / ``TETROMINO_TOKEN``
  in its environment; it must connect by itself.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from referee.sandbox.cpu import BotCpu
from referee.sandbox.isolation import Isolation
from referee.sandbox.jail import Jail
from referee.sandbox.process import BotProcess

_MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*(:[A-Za-z_]\w*)?")


@dataclass(frozen=True, slots=True)
class BotSpec:
    """How to start one bot: ``kind`` is ``sdk`` (package, file or module) or ``command``."""

    kind: str
    value: str

    @property
    def label(self) -> str:
        """A short name for results and logs."""
        if self.kind == "command":
            return shlex.split(self.value)[0] if self.value.strip() else "command"
        target = self.value.split(":", 1)[0].rstrip("/")
        return Path(target).name.removesuffix(".py") if "/" in target else target

    def argv(self, server: str, token: str, token_file: str = "") -> list[str]:
        """The command line that connects this uncontained bot to ``server`` (an SDK bot
        reads its token from ``token_file``; a command gets ``{token}`` as it asked)."""
        if self.kind == "sdk":
            # "--opt=value" so that a value starting with "-" is never read as an option.
            return [
                sys.executable,
                "-m",
                "client_sdk",
                f"--server={server}",
                f"--token-file={token_file}" if token_file else f"--token={token}",
                "--",
                self.value,
            ]
        text = (
            self.value.replace("{server}", server)
            .replace("{token_file}", token_file)
            .replace("{token}", token)
        )
        return ["/bin/sh", "-c", f"exec {text}" if not re.search(r"[;&|\n]", text) else text]


def parse_bot_spec(text: str) -> BotSpec:
    """Classify a bot argument (see the module docstring); ``cmd:`` or ``sdk:`` forces a kind."""
    for prefix, kind in (("cmd:", "command"), ("sdk:", "sdk")):
        if text.startswith(prefix):
            return BotSpec(kind, text[len(prefix) :])
    target = text.split(":", 1)[0]
    if Path(target).exists() or (_MODULE.fullmatch(text) and not text.endswith(".py")):
        return BotSpec("sdk", text)
    if text.endswith(".py") or ("/" in target and " " not in text):
        raise ValueError(f"bot {text!r}: no such file or directory")
    return BotSpec("command", text)


#: The course's memory limit per bot, in MB (the default for launched bots).
DEFAULT_MEMORY_MB = 250.0
#: How much of a bot's output is kept (head and tail, the middle is counted and dropped).
OUTPUT_LIMIT_BYTES = 64 * 1024


class OutputView:
    """A launched bot's captured output (stdout and stderr, bounded)."""

    def __init__(self, proc: BotProcess) -> None:
        self._proc = proc

    @property
    def dropped(self) -> int:
        return self._proc.stderr_dropped_bytes

    def text(self) -> str:
        return self._proc.stderr_text()

    def tail(self, lines: int = 5) -> str:
        return "\n".join(self.text().rstrip().splitlines()[-lines:])


@dataclass(eq=False)
class LaunchedBot:
    """One bot process under the sandbox: its output, its peak memory, how it ended."""

    spec: BotSpec
    proc: BotProcess
    #: The token it connects with.
    token: str = ""
    #: How it was contained (what records and results say).
    isolation: Isolation = Isolation.NONE
    #: Its sandbox (the per-game copy of its code), removed when it is stopped.
    jail: Jail | None = None
    #: Where an uncontained bot's token file lives (removed when it is stopped).
    token_dir: str | None = None
    #: The seed it was given in ``TETROMINO_SEED`` (None: none).
    seed: int | None = None
    #: Whether it started in a warm sandbox (:mod:`referee.sandbox.warm`) rather than cold.
    warm: bool = False

    def __post_init__(self) -> None:
        self.output = OutputView(self.proc)
        self.cpu = BotCpu(self.proc.pid)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    @property
    def running(self) -> bool:
        return self.proc.running

    @property
    def peak_rss_bytes(self) -> int:
        """Peak resident memory of the bot's process tree (see docs/limits.md); for a bot the
        kernel killed at its cgroup's limit, the cgroup's peak charge, which saw what grew
        between two polls (the figure the exit sentence gives, so the two never disagree)."""
        if self.proc.memory_verdict == "cgroup_oom":
            return self.proc.peak_bytes
        return self.proc.peak_rss_bytes

    @property
    def memory_exceeded(self) -> bool:
        return self.proc.memory_exceeded

    @property
    def memory_limit_bytes(self) -> int:
        return self.proc.policy.limit_bytes if self.proc.policy is not None else 0

    @property
    def memory_method(self) -> str:
        """``cgroup`` when a memory cgroup held the bot, else ``rss_poll``."""
        return "cgroup" if "cgroup" in self.proc.measurement else "rss_poll"

    @property
    def measurement(self) -> str:
        """Every layer that measured and limited it, e.g. ``rlimit_data+rss_poll+cgroup_v2``."""
        return self.proc.measurement

    def cpu_seconds(self) -> float:
        """CPU seconds the bot's processes have used since launch (see :mod:`.cpu`)."""
        return self.cpu.seconds()

    @property
    def cpu_method(self) -> str:
        """How its CPU time is counted: ``cgroup_v1``, ``cgroup_v2`` or ``process_tree``."""
        return self.cpu.method

    def describe_exit(self) -> str:
        return self.proc.exit_description()

    async def wait_exit(self) -> int | None:
        """Wait until the bot's main process has exited; its return code."""
        return await self.proc.wait()

    async def wait(self, timeout: float) -> int | None:
        """The exit code, waiting up to ``timeout`` seconds (``None`` if still running)."""
        try:
            async with asyncio.timeout(timeout):
                return await self.proc.wait()
        except TimeoutError:
            return None

    async def stop(self, grace: float = 2.0) -> None:
        """End the bot and everything it started: SIGTERM, then SIGKILL after ``grace``."""
        self.cpu.close()  # its last reading, before its cgroups go
        try:
            await self.proc.stop(grace)
        finally:
            if self.jail is not None:
                self.jail.remove()
            if self.token_dir is not None:
                shutil.rmtree(self.token_dir, ignore_errors=True)
