"""A background game's bot is weighed by its class's cpu cgroup, not as a session of its own
(the kernel's autogroups): cold or warm, it is in the class's low-weight group, a foreground
bot is not, the bot cannot leave it, and launches leave no cpu cgroup behind but the class's."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from engine.registry import load_game
from referee.play.local import play_match
from referee.sandbox import cpuweight, priority, warm
from referee.sandbox.botgroups import BotCgroups
from referee.sandbox.cgroups import CgroupParent, parse_proc_cgroup
from referee.sandbox.cpu import CpuCgroup
from referee.sandbox.isolation import Isolation
from referee.sandbox.launch import BotSpec, launch

from .helpers import BOTS, wait_for_output
from .sandbox_required import require_sandbox

CLASS = f"{cpuweight.CLASS_PREFIX}{priority.BACKGROUND_NICE}"

needs_cpu_group = pytest.mark.skipif(
    cpuweight.detect_cpu_parent() is None,
    reason="this machine offers no writable cgroup v1 cpu hierarchy of its own",
)


def test_a_class_weighs_as_one_task_at_its_niceness() -> None:
    """The kernel's weights: 1024 at 0, 110 at +10 (cpu.weight 11 of 100 on v2), 15 at 19."""
    assert cpuweight.shares_for(0) == 1024
    assert cpuweight.shares_for(priority.BACKGROUND_NICE) == 110
    assert cpuweight.weight_for(priority.BACKGROUND_NICE) == 11
    assert cpuweight.shares_for(40) == 15


def test_v2_gives_the_bots_own_cgroup_its_weight_where_cpu_is_delegated(tmp_path: Path) -> None:
    """On v2 the bot's own cgroup gets cpu.weight 11 when its parent delegates cpu; without
    cpu in the parent's subtree_control nothing is written (niceness only)."""
    bot = tmp_path / "tetromino-bot-1-1"
    bot.mkdir()
    (tmp_path / "cgroup.subtree_control").write_text("memory pids\n")
    assert not cpuweight.weigh_own(bot, 2, priority.BACKGROUND_NICE)
    assert not (bot / "cpu.weight").exists()
    (tmp_path / "cgroup.subtree_control").write_text("cpu memory pids\n")
    assert cpuweight.weigh_own(bot, 2, priority.BACKGROUND_NICE)
    assert (bot / "cpu.weight").read_text() == "11"


def test_v1_uses_the_class_group_or_the_bots_own_cpuacct_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With cpu a hierarchy of its own, a background bot joins the class's group (110
    shares); with cpu mounted with cpuacct, its own cpuacct cgroup gets the 110 shares."""
    cpu_root, acct_root = tmp_path / "cpu", tmp_path / "cpuacct"
    for root in (cpu_root, acct_root):
        (root / "tetromino-bot-1-1").mkdir(parents=True)
    monkeypatch.setattr(cpuweight, "detect_cpu_parent", lambda: CgroupParent(1, cpu_root))
    for switch in (cpuweight.CPU_GROUPS_ENV, "TETROMINO_CGROUP"):
        monkeypatch.delenv(switch, raising=False)
    for acct, joins in ((acct_root, True), (cpu_root, False)):
        groups = BotCgroups()
        groups.cpu = CpuCgroup(CgroupParent(1, acct), acct / "tetromino-bot-1-1")
        groups.weight_group = groups._weigh(priority.BACKGROUND_NICE)
        if joins:
            assert groups.join_files()[-1] == str(cpu_root / CLASS / "cgroup.procs")
            assert (cpu_root / CLASS / "cpu.shares").read_text() == "110"
        else:
            assert groups.weight_group is None
            assert (cpu_root / "tetromino-bot-1-1" / "cpu.shares").read_text() == "110"


def _cpu_group(pid: int) -> str | None:
    """The v1 cpu cgroup path of ``pid`` as the host sees it (None once it is gone)."""
    try:
        text = Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return None
    return parse_proc_cgroup(text)[0].get("cpu")


def _groups_of(proc: Any) -> set[str]:
    """The cpu cgroups of every process of a launched bot."""
    found = {_cpu_group(pid) for pid in {proc.pid, *proc._groups.pids()}}
    return {group for group in found if group is not None}


def _bot_dirs() -> set[str]:
    """The cpu cgroup folders named for bots beside the referee's."""
    parent = cpuweight.detect_cpu_parent()
    assert parent is not None
    return {entry.name for entry in parent.path.iterdir() if entry.name.startswith("tetromino-")}


async def _launch_escaper(background: bool) -> tuple[set[str], str]:
    """Launch the bot that tries to leave its cpu cgroup (in a background game or not): the
    cpu cgroups of its processes once it and its child have tried, and what it said."""
    spec = BotSpec("command", f"python {shlex.quote(str(BOTS / 'leaves_cpu_group.py'))}")
    with priority.background() if background else contextlib.nullcontext():
        launched = await launch(spec, "", "", isolation=Isolation.BWRAP)
    try:
        await wait_for_output(launched.proc, "ready", 30)
        output = await wait_for_output(launched.proc, "child in a session", 30)
        return _groups_of(launched.proc), output
    finally:
        await launched.stop(0.3)


@pytest.mark.slow
@needs_cpu_group
def test_a_background_bot_launched_cold_is_in_its_class_group_and_stays() -> None:
    """Every process of a background game's bot, its child in a new session too, is in the
    class's cpu group (110 shares) after trying to move itself out; a foreground bot is in
    the referee's own; the class group is the only bot cpu folder left afterwards."""
    require_sandbox()
    before = _bot_dirs()
    lower, said = asyncio.run(_launch_escaper(True))
    usual, _ = asyncio.run(_launch_escaper(False))
    parent = cpuweight.detect_cpu_parent()
    assert parent is not None
    assert {Path(group).name for group in lower} == {CLASS}
    assert "MOVED" not in said and said.count("REFUSED") == 6
    assert all(Path(group).name != CLASS for group in usual)
    assert (parent.path / CLASS / "cpu.shares").read_text().strip() == "110"
    assert _bot_dirs() - before <= {CLASS}


def _bots(tmp_path: Path) -> list[BotSpec]:
    """Two copies of an ordinary SDK bot, each in a folder of its own."""
    specs = []
    for name in ("first", "second"):
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(BOTS / "leaves_behind.py", folder / "bot.py")
        specs.append(BotSpec("sdk", str(folder / "bot.py")))
    return specs


@pytest.mark.slow
@needs_cpu_group
def test_a_warm_sandbox_handed_to_a_background_game_joins_the_class_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started in the referee's cpu cgroup, a warm sandbox given to a background game has all
    its processes in the class's group before its bot's code starts; one given to a
    foreground game stays out of it."""
    require_sandbox()
    seen: list[set[str]] = []
    real = warm.hand_over

    def watched(*args: Any) -> Any:
        bot = real(*args)
        seen.append(_groups_of(bot.proc))
        return bot

    monkeypatch.setattr(warm, "hand_over", watched)
    specs = _bots(tmp_path)

    async def main() -> int:
        async with warm.demand(4, warm.WarmTerms(), Isolation.BWRAP) as need:
            assert need is not None
            await need.pool.ready(count=2, timeout=120)
            with priority.background():
                await play_match(specs, load_game("tetress"), isolation=Isolation.BWRAP)
            await need.pool.ready(count=2, timeout=120)
            await play_match(specs, load_game("tetress"), isolation=Isolation.BWRAP)
            return need.pool.hits

    before = _bot_dirs()
    assert asyncio.run(main()) == 4
    assert [{Path(g).name for g in groups} for groups in seen[:2]] == [{CLASS}, {CLASS}]
    assert all(Path(g).name != CLASS for groups in seen[2:] for g in groups)
    assert _bot_dirs() - before <= {CLASS}
