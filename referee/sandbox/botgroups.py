"""The cgroups one bot runs in: its memory cgroup and, where they are separate hierarchies
(cgroup v1), its ``pids`` cgroup capping its processes and threads and its ``cpuacct`` cgroup
counting its CPU time."""

from __future__ import annotations

import logging
from typing import Literal

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

    @classmethod
    def create(
        cls,
        cgroup: Literal["auto", "off"] | CgroupParent,
        memory_limit_bytes: int | None,
        max_tasks: int | None,
    ) -> BotCgroups:
        """A memory cgroup capped at ``memory_limit_bytes`` (when given), and a task cap."""
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
        return self

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
