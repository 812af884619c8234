"""How long a tournament takes: games, CPU-hours and hours to finish on a number of cores.

Pure arithmetic over the schedule's game count (:func:`.schedule.planned_games`):

- each game costs the CPU of its two bots (``cpu_per_bot_s`` each: measured from stored games
  where there are some, else ``DEFAULT_CPU_PER_BOT_S``), never more than the time control
  allows a bot, plus ``START_CPU_S`` for starting the two sandboxed bot processes;
- the two bots of a game move in turn, so a game holds one core for its whole CPU time, and
  the workers play one game per core: the hours to finish are the CPU-hours over the cores
  (rounds of Swiss and adaptive wait for their last game, which adds little while a round
  has many more games than there are cores).
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_CPU_PER_BOT_S = 40.0
"""CPU seconds one bot uses in one game when nothing is measured: the course's real bots use
20 to 60 s of CPU per game."""
START_CPU_S = 0.3
"""Starting the two bot processes of a game (about 0.15 s of CPU each, docs/tournaments.md)."""


@dataclass(frozen=True, slots=True)
class Plan:
    teams: int
    format: str
    games: int
    cpu_per_bot_s: float
    cores: int

    @property
    def cpu_per_game_s(self) -> float:
        return 2.0 * self.cpu_per_bot_s + START_CPU_S

    @property
    def cpu_hours(self) -> float:
        return self.games * self.cpu_per_game_s / 3600.0

    @property
    def hours(self) -> float:
        """Wall hours on ``cores`` worker cores, one game per core."""
        return self.cpu_hours / max(1, self.cores)


def cpu_per_bot(measured: list[float], time_per_game_s: float | None) -> tuple[float, str]:
    """The CPU seconds per bot per game to plan with, and where it comes from: the mean of
    ``measured`` (seconds each seat's clock counted in stored games) or the default, capped
    at the time control (a bot that used more would have lost on time)."""
    if measured:
        value, source = sum(measured) / len(measured), f"measured over {len(measured)} seats"
    else:
        value, source = DEFAULT_CPU_PER_BOT_S, f"default {DEFAULT_CPU_PER_BOT_S:g} s"
    if time_per_game_s is not None and time_per_game_s > 0 and value > time_per_game_s:
        value, source = time_per_game_s, f"{source}, capped at the time control"
    return value, source
