"""``referee match -v``: the board and both clocks after every move, and each bot's output."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from engine.game import State
    from referee.match.clock import SeatClock
    from referee.match.report import GameReport, MoveLog
    from referee.sandbox.launch import LaunchedBot, OutputView


class MoveDisplay:
    """``-v``: the board and both clocks after every move, and what each bot printed (each
    line prefixed by its seat, as the course referee shows it)."""

    def __init__(self, console: Console, seat_names: tuple[str, str], color: bool | None) -> None:
        self.console = console
        self.seat_names = seat_names
        self.color = console.is_terminal if color is None else color
        self._outputs: list[OutputView] = []
        self._seen: list[str] = []

    def attach(self, bots: Sequence[LaunchedBot]) -> None:
        self._outputs = [bot.output for bot in bots]
        self._seen = ["" for _ in bots]

    def flush_output(self) -> None:
        """Print the complete lines each bot wrote since the last call."""
        from referee.commands._safe import esc

        for seat, output in enumerate(self._outputs):
            text = output.text()
            seen = self._seen[seat]
            if not text.startswith(seen):
                # The capture dropped its middle (a bot printing a lot): restart from here.
                seen = text[: text.rfind("\n") + 1]
                self.console.print(f"[dim]{self.seat_names[seat]}> [... output cut ...][/dim]")
            fresh = text[len(seen) :]
            complete = fresh[: fresh.rfind("\n") + 1]
            self._seen[seat] = seen + complete
            for line in complete.splitlines():
                self.console.print(f"[dim]{self.seat_names[seat]}>[/dim] {esc(line, 1000)}")

    def on_move(self, state: State[Any], move: MoveLog, clocks: Sequence[SeatClock]) -> None:
        from rich.text import Text

        from engine.adjudication import ply_number

        self.flush_output()
        name = self.seat_names[move.seat]
        times = "   ".join(
            f"{seat} {_clock(clock.remaining, clock.used)}"
            for seat, clock in zip(self.seat_names, clocks, strict=True)
        )
        cpu = "" if move.cpu_s is None else f", CPU {move.cpu_s:.3f} s"
        self.console.print(
            f"[bold]{ply_number(move.ply):>3}. {name}[/bold] {move.action}  "
            f"[dim]{move.time_s:.3f} s (wall {move.wall:.3f} s{cpu})[/dim]   {times}"
        )
        self.console.print(Text.from_ansi(state.render(color=self.color)))

    def on_end(self, state: State[Any], report: GameReport) -> None:
        self.flush_output()


def _clock(remaining: float | None, used: float) -> str:
    return f"{remaining:.2f} s left" if remaining is not None else f"{used:.2f} s used"
