"""The cgroups one bot runs in: its memory cgroup and, where they are separate hierarchies
(cgroup v1), its ``pids`` cgroup capping its processes and threads and its ``cpuacct`` cgroup
counting its CPU time; for a background game's bot, the ``cpu`` weight of its class
(:mod:`.cpuweight`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from referee.sandbox import cpuweight
from referee.sandbox.cgroups import (
    CgroupParent,
    MemoryCgroup,
    TaskCgroup,
    detect_cgroup_parent,
    detect_pids_parent,
)
from referee.sandbox.cpu import CpuCgroup, detect_cpuacct_parent

__all__ = ["BotCgroups"]

log = logging.getLogger(__name__)


class BotCgroups:
    """A bot's cgroups (none where the machine offers none); ``max_tasks`` is the task cap
    in force, if one is."""

    def __init__(self) -> None:
        self.memory: MemoryCgroup | None = None
        self.tasks: TaskCgroup | None = None
        self.max_tasks: int | None = None
        #: Its v1 ``cpuacct`` cgroup, counting its CPU time (on v2 its memory cgroup does).
        self.cpu: CpuCgroup | None = None
        #: The shared v1 ``cpu`` group of its class it joins (a background game's bot where
        #: ``cpu`` is a hierarchy of its own): never killed or removed with the bot.
        self.weight_group: Path | None = None

    @classmethod
    def create(
        cls,
        cgroup: Literal["auto", "off"] | CgroupParent,
        memory_limit_bytes: int | None,
        max_tasks: int | None,
        cpu_class: int = 0,
    ) -> BotCgroups:
        """A memory cgroup capped at ``memory_limit_bytes`` (when given), a task cap, and for
        ``cpu_class`` > 0 (a background game's bot, that many steps of niceness lower) the
        class's CPU weight."""
        self = cls()
        parent = detect_cgroup_parent() if cgroup == "auto" else cgroup
        if isinstance(parent, CgroupParent) and memory_limit_bytes is not None:
            try:
                self.memory = MemoryCgroup.create(parent, memory_limit_bytes)
            except OSError as e:
                log.warning("bot runs without a memory cgroup: %s", e)
        if max_tasks is not None and cgroup != "off":
            self._limit_tasks(max_tasks)
        if cgroup != "off":
            self._count_cpu()
            if cpu_class > 0:
                self.weight_group = self._weigh(cpu_class)
        return self

    def _weigh(self, cpu_class: int) -> Path | None:
        """Give the bot its class's CPU weight: in its own cgroup (v2, or v1 ``cpu`` mounted
        with ``cpuacct``), else the class's v1 ``cpu`` group to join (returned)."""
        if not cpuweight.enabled():
            return None
        if self.memory is not None and self.memory.parent.version == 2:
            cpuweight.weigh_own(self.memory.path, 2, cpu_class)
            return None
        parent = cpuweight.detect_cpu_parent()
        if parent is None:
            cpuweight.say_once("background bots keep only their niceness (no v1 cpu group)")
            return None
        if self.cpu is not None and self.cpu.parent.path == parent.path:
            cpuweight.weigh_own(self.cpu.path, 1, cpu_class)
            return None
        return cpuweight.class_group(parent, cpu_class)

    def lower_now(self, cpu_class: int, tree: Callable[[], Iterable[int]]) -> None:
        """Give the running bot (a warm sandbox handed to a background game) its class's CPU
        weight: its own cgroup's, or every one of its processes (its cgroups' members, or
        ``tree()`` where it has none) moved into the class's."""
        if cpu_class <= 0 or self.weight_group is not None:
            return
        self.weight_group = self._weigh(cpu_class)
        if self.weight_group is not None:
            cpuweight.move_into(self.weight_group, self.pids if self.all() else tree)

    def join_files(self) -> list[str]:
        """The ``cgroup.procs`` files the bot's first process joins before it execs."""
        files = [str(cg.procs_file) for cg in self.all()]
        if self.weight_group is not None:
            files.append(str(self.weight_group / "cgroup.procs"))
        return files

    def _count_cpu(self) -> None:
        """On cgroup v1, a ``cpuacct`` cgroup counting the bot's CPU time (:mod:`.cpu`)."""
        if self.memory is not None and self.memory.parent.version == 2:
            return
        parent = detect_cpuacct_parent()
        if parent is None:
            return
        try:
            self.cpu = CpuCgroup.create_cpu(parent)
        except OSError as e:
            log.warning("bot's CPU time is read from its processes: %s", e)

    def _limit_tasks(self, max_tasks: int) -> None:
        """Cap the bot's processes and threads where a ``pids`` cgroup allows it."""
        if self.memory is not None and self.memory.limit_tasks(max_tasks):
            self.max_tasks = max_tasks
            return
        parent = detect_pids_parent()
        if parent is None:
            return
        try:
            self.tasks = TaskCgroup.create_tasks(parent, max_tasks)
        except OSError as e:
            log.warning("bot runs without a task limit: %s", e)
            return
        self.max_tasks = max_tasks

    def all(self) -> list[MemoryCgroup]:
        """The bot's cgroups: its memory one and, on cgroup v1, its ``pids`` and ``cpuacct``
        ones."""
        return [cg for cg in (self.memory, self.tasks, self.cpu) if cg is not None]

    def pids(self) -> list[int]:
        """Every process the bot's cgroups hold now."""
        groups = self.all()
        if len(groups) == 1:
            return groups[0].pids()
        return sorted({pid for cg in groups for pid in cg.pids()})

    def tasks_refused(self) -> int:
        """How many forks or thread starts the task cap refused (0 without a cap)."""
        if self.tasks is not None:
            return self.tasks.tasks_refused()
        if self.max_tasks is not None and self.memory is not None:
            return self.memory.tasks_refused()
        return 0
