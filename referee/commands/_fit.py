"""Tables that fit the terminal they are printed in, decided when rich renders them.

rich squeezes every column of a table that is too wide, numbers included (at 80 columns the
leaderboard lost its ``forfeits`` and its right border; at 100 the games list cut its ids to
nothing). A :class:`FitTable` knows its columns' roles instead: numbers and ids keep their
width, an empty column is left out, a column marked ``footnote`` moves under the table when it
does not fit, so does a ``same`` column whose rows all hold one value, a ``shrink`` column
(names) is cut with an ellipsis in its middle, and a ``wrap`` column (a
sentence) wraps onto more lines. Printed to a pipe or a file (a console that soft-wraps),
every row stays on one line, unless ``$COLUMNS`` asks for a width.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rich.measure import Measurement
from rich.text import Text

from referee.commands._safe import SafeTable, lines
from referee.text.names import display

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

#: The width a table may take when printed to a pipe (never reached in practice).
UNBOUNDED = 100_000


@dataclass(frozen=True, slots=True)
class Col:
    """One column and how it gives way when the table is too wide."""

    name: str
    justify: Literal["left", "right", "center"] = "left"
    #: Cut with "…" to fit (names).
    shrink: bool = False
    #: Wrapped onto more lines to fit (a sentence); only in a terminal.
    wrap: bool = False
    #: Moved under the table ("header: key: value; ...") when the table does not fit.
    footnote: bool = False
    #: The narrowest a shrink or wrap column gets.
    min_width: int = 8
    #: In a terminal, the widest a shrink column gets even when there is room (0: no cap).
    max_width: int = 0
    #: Said once under the table ("header: value") when every row holds the same value and
    #: the table does not fit (the game, the sandbox of a games list).
    same: bool = False


class FitTable:
    """A table of plain-text cells laid out for the width it is printed at (see the module)."""

    def __init__(
        self,
        columns: Sequence[Col],
        rows: Sequence[Sequence[str]],
        *,
        title: str | None = None,
        caption: str | None = None,
        key: int = 0,
    ) -> None:
        self.rows = [[display(str(cell), 200) for cell in row] for row in rows]
        kept = [i for i, _ in enumerate(columns) if any(row[i] for row in self.rows)]
        # An empty column says nothing; with no rows, the headers still say what would be here.
        self.columns = [columns[i] for i in kept] if self.rows else list(columns)
        if self.rows:
            self.rows = [[row[i] for i in kept] for row in self.rows]
        self.title = title
        self.caption = caption
        self.key = kept.index(key) if self.rows and key in kept else 0

    def _widths(self, columns: Sequence[int], capped: bool) -> list[int]:
        widths = []
        for i in columns:
            column = self.columns[i]
            width = max([len(column.name), *(len(row[i]) for row in self.rows)])
            if capped and column.shrink and column.max_width:
                width = min(width, max(column.max_width, len(column.name)))
            widths.append(width)
        return widths

    def _same(self, i: int) -> bool:
        """Whether column ``i`` may be said once: marked so, and one value in 2+ rows."""
        values = {row[i] for row in self.rows}
        return self.columns[i].same and len(self.rows) > 1 and len(values) == 1

    def layout(self, max_width: int) -> tuple[list[int], list[int], list[str]]:
        """The columns shown, their widths, and the footnote lines, for ``max_width``."""
        shown = list(range(len(self.columns)))
        notes: list[str] = []
        capped = max_width < UNBOUNDED
        widths = self._widths(shown, capped)
        overhead = 3 * len(shown) + 1  # rich's box: a border and a space each side per column
        if sum(widths) + overhead > max_width:
            moved = [i for i in shown if self.columns[i].footnote or self._same(i)]
            for i in moved:
                if self._same(i):
                    notes.append(f"{self.columns[i].name}: {self.rows[0][i]} (every row)")
                    continue
                items = [f"{row[self.key]}: {row[i]}" for row in self.rows if row[i]]
                notes.append(f"{self.columns[i].name}: " + "; ".join(items))
            shown = [i for i in shown if i not in moved]
            widths = self._widths(shown, capped)
            overhead = 3 * len(shown) + 1
        excess = sum(widths) + overhead - max_width
        floors = [max(self.columns[i].min_width, len(self.columns[i].name)) for i in shown]
        # Sentences wrap first; then the widest name gives a column at a time, so two long
        # names are cut alike rather than one whole and one to nothing.
        for position, i in enumerate(shown):
            if excess > 0 and self.columns[i].wrap:
                cut = max(0, min(excess, widths[position] - floors[position]))
                widths[position] -= cut
                excess -= cut
        shrinkable = [p for p, i in enumerate(shown) if self.columns[i].shrink]
        while excess > 0:
            room = [p for p in shrinkable if widths[p] > floors[p]]
            if not room:
                break
            widest = max(room, key=lambda p: widths[p])
            widths[widest] -= 1
            excess -= 1
        return shown, widths, notes

    def table(self, max_width: int) -> SafeTable:
        """The rich table laid out for ``max_width`` columns."""
        shown, widths, notes = self.layout(max_width)
        # One clean line each: the caption's lines, then the footnotes (which name every bot
        # with a forfeit, so they may be long).
        said = [*(self.caption.split("\n") if self.caption else []), *notes]
        table = SafeTable(title=self.title, caption=lines(said, 2000) if said else None)
        for i, width in zip(shown, widths, strict=True):
            column = self.columns[i]
            table.add_column(
                column.name,
                justify=column.justify,
                no_wrap=not column.wrap,
                overflow="fold" if column.wrap else "ellipsis",
                min_width=width,
                max_width=width,
            )
        sized = list(zip(shown, widths, strict=True))
        for row in self.rows:
            table.add_row(*(Text(_cut(row[i], w, self.columns[i])) for i, w in sized))
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if console.is_terminal or not console.soft_wrap or piped_columns():
            yield self.table(options.max_width)
            return
        # A pipe or a file (the CLI's consoles soft-wrap there: referee.commands._arena.console)
        # with no $COLUMNS: one line per row, however long; the reader's pager or editor cuts
        # or wraps it.
        yield from console.render(self.table(UNBOUNDED), options.update_width(UNBOUNDED))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)


def piped_columns() -> int | None:
    """The width ``$COLUMNS`` asks output to a pipe or a file to be laid out for (``COLUMNS=80
    referee games | less``), or ``None`` when it is not set to a positive number."""
    import os

    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


def _cut(text: str, width: int, column: Col) -> str:
    """``text`` cut to ``width`` (a wrap column keeps it whole: it wraps)."""
    return text if column.wrap else middle_cut(text, width)


def middle_cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` with "…" in its middle, keeping its start and its end: names
    that share a start (``course_greedy``, ``course_random``) stay told apart."""
    if len(text) <= width:
        return text
    if width < 2:
        return "…"[:width]
    tail = (width - 1) // 2
    return text[: width - 1 - tail] + "…" + (text[-tail:] if tail else "")
