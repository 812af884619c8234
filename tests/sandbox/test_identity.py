"""A root referee runs each sandboxed bot as its own unprivileged host uid, and games still work."""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from collections.abc import Sequence
from pathlib import Path

import psutil
import pytest

from engine.registry import load_game
from referee.play.local import play_match
from referee.sandbox.identity import BOT_UID_BASE, BOT_UID_COUNT
from referee.sandbox.isolation import Isolation
from referee.sandbox.launch import BotSpec, LaunchedBot

from .sandbox_required import require_sandbox

pytestmark = pytest.mark.slow

SLOW_BOT = """
import time
from client_sdk.examples.random_bot import RandomBot


class Agent(RandomBot):
    def choose_move(self, *args, **kwargs):
        time.sleep(0.05)  # long enough for the host to look at the processes
        return super().choose_move(*args, **kwargs)
"""


class Watcher:
    """Samples, from the host, the uids of every process under each launched bot."""

    def __init__(self) -> None:
        self.seen: dict[int, set[tuple[str, int, int]]] = {}
        self.folders: list[tuple[int, int]] = []
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def launched(self, bots: Sequence[LaunchedBot]) -> None:
        for bot in bots:
            assert bot.jail is not None
            info = os.stat(bot.jail.folder)
            self.folders.append((info.st_uid, stat.S_IMODE(info.st_mode)))
        self.thread = threading.Thread(target=self._run, args=([b.pid for b in bots],))
        self.thread.start()

    def _run(self, pids: list[int]) -> None:
        while not self.stop.wait(0.02):
            for pid in pids:
                try:
                    tree = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
                    for proc in tree:
                        cmd = " ".join(proc.cmdline())
                        if "_shim.py" in cmd:  # the shim, before it drops to the bot's uid
                            continue
                        ids = proc.uids()
                        self.seen.setdefault(pid, set()).add((proc.name(), ids.real, ids.effective))
                except psutil.Error:
                    continue


@pytest.mark.skipif(os.geteuid() != 0, reason="bots run as the referee's own uid unless root")
def test_root_referee_runs_each_bot_as_its_own_unprivileged_uid(tmp_path: Path) -> None:
    """Every bwrap and bot process is seen on the host with a bot uid from the reserved range
    (never 0), one uid per bot, owning its 0700 per-game folder; the game finishes normally."""
    require_sandbox()
    bot = tmp_path / "slow_bot"
    bot.mkdir()
    (bot / "__init__.py").write_text(SLOW_BOT)
    watcher = Watcher()
    specs = [BotSpec("sdk", str(bot)), BotSpec("sdk", str(bot))]
    try:
        result = asyncio.run(
            play_match(
                specs,
                load_game("tetress"),
                isolation=Isolation.BWRAP,
                on_launched=watcher.launched,
            )
        )
    finally:
        watcher.stop.set()
        if watcher.thread is not None:
            watcher.thread.join()
    assert result.report.end is not None, result.output(0)
    assert result.report.end.verdict.value in ("normal", "turn_limit"), result.report.end
    assert result.report.labels["sandbox"] == "bwrap"
    uids_per_bot = []
    for samples in watcher.seen.values():
        names = {name for name, _, _ in samples}
        assert "bwrap" in names and any(n.startswith("python") for n in names), samples
        uids = {u for _, real, eff in samples for u in (real, eff)}
        assert len(uids) == 1, samples
        uids_per_bot.append(uids.pop())
    assert len(uids_per_bot) == 2 and uids_per_bot[0] != uids_per_bot[1], uids_per_bot
    for uid in uids_per_bot:
        assert BOT_UID_BASE <= uid < BOT_UID_BASE + BOT_UID_COUNT
    assert sorted(u for u, _ in watcher.folders) == sorted(uids_per_bot)
    assert {mode for _, mode in watcher.folders} == {0o700}
