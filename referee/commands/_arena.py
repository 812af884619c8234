"""Shared by the arena commands (players, bots, tournaments, tables, games): the database
option, and the rich renderings of a leaderboard and of a running tournament."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # the commands import their machinery lazily (see referee.commands.main)
    from rich.console import Console, RenderableType
    from rich.progress import TaskID

    from referee.commands._fit import FitTable
    from referee.commands._safe import SafeTable as Table
    from referee.ratings.ladder import LadderRow
    from referee.ratings.table import Row
    from referee.storage import GameSummary, Repository, TournamentInfo
    from referee.tournament.standings import Standings

DB_HELP = (
    "database URL or SQLite file (default: $ARENA_DATABASE_URL, else ./arena.db, created on "
    "first use; another file must exist unless --create is given)"
)


def add_db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="URL", default=None, help=DB_HELP)
    parser.add_argument(
        "--create", action="store_true", help="create the --db SQLite file if it does not exist"
    )


def open_repo(args: argparse.Namespace) -> Repository:
    """The command's database; a one-line reason and exit code 2 when it cannot be opened."""
    from referee.commands._dbopen import open_or_exit

    command = " ".join(str(part) for part in (args.command, getattr(args, "action", None)) if part)
    return open_or_exit(command, args.db, create=getattr(args, "create", False))


def fail(command: str, message: object, code: int = 2) -> int:
    print(f"referee {command}: {message}", file=sys.stderr)
    return code


def _short(label: str, width: int = 28) -> str:
    from referee.commands._fit import middle_cut

    return middle_cut(label, width)


def display_names(labels: list[str]) -> dict[str, str]:
    """``name@version`` shortened to ``name`` where no other version of it is listed."""
    names = [label.split("@", 1)[0] for label in labels]
    return {
        label: _short(name if names.count(name) == 1 else label)
        for label, name in zip(labels, names, strict=True)
    }


def console(stderr: bool = False) -> Console:
    """A rich console. Not a terminal (a pipe, a file): tables are laid out for ``$COLUMNS``
    columns when that is set (as in a terminal that wide), else for 120 (a
    :class:`~referee.commands._fit.FitTable`: one line per row, however long); text lines are
    never hard-wrapped there (the reader's pager or editor wraps them)."""
    from rich.console import Console

    from referee.commands._fit import piped_columns

    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr)
    return Console(stderr=stderr, width=piped_columns() or 120, soft_wrap=True)


#: What ``inc. Elo`` is, said under every Elo table.
INCREMENTAL_NOTE = "inc. Elo: updated after each game, in the order played"


def leaderboard_table(st: Standings, title: str) -> RenderableType:
    """The table of a :class:`referee.tournament.standings.Standings`: one table per connected
    group (ratings of two groups are not comparable), each saying what it rests on."""
    from rich.console import Group

    board = st.board
    groups: dict[int, list[Row]] = {}
    for r in board.rows:
        groups.setdefault(r.group, []).append(r)
    rated = {g for g, rows in groups.items() if any(r.elo is not None for r in rows)}

    def caption(games: int) -> str:
        return (
            f"Elo: maximum likelihood, anchor: {board.anchor}; rests on {games} games. "
            f"{INCREMENTAL_NOTE}"
        )

    if len(rated) <= 1:
        return _group_table(board.rows, title, caption(board.games))
    apart = "no chain of games links this group to another: compare ratings only within it"
    tables = [
        _group_table(
            rows,
            f"{title}, group {g} of {len(rated)}" if g in rated else f"{title}, not rated",
            f"{caption(board.games_in(g))}; {apart}" if g in rated else "no counted games",
        )
        for g, rows in sorted(groups.items())
    ]
    return Group(*tables)


def _group_table(rows: Sequence[Row], title: str, caption: str) -> FitTable:
    """One group's rows laid out for the terminal (:mod:`referee.commands._fit`): at 80 columns
    every number stays whole, names are cut with "…", and forfeits move under the table when
    they do not fit beside it."""
    from referee.commands._fit import Col, FitTable

    columns = [
        Col("#", "right"),
        Col("bot", shrink=True, min_width=8, max_width=32),
        Col("Elo", "right"),
        Col("± 95%", "right"),
        Col("inc. Elo", "right"),
        Col("games", "right"),
        Col("W", "right"),
        Col("D", "right"),
        Col("L", "right"),
        Col("score", "right"),
        Col("forfeits", footnote=True),
    ]
    shown = display_names([r.player for r in rows])
    reasons = sorted({r.provisional for r in rows if r.provisional and r.elo is not None})
    if reasons:
        caption = f"{caption}\n? provisional: {'; '.join(reasons)}"
    cells = [
        [
            str(r.rank),
            shown[r.player],
            "-" if r.elo is None else f"{r.elo:.0f}" + ("?" if r.provisional else ""),
            "-" if r.ci95 is None else f"{r.ci95:.0f}",
            f"{r.elo_incremental:.0f}",
            str(r.games),
            str(r.wins),
            str(r.draws),
            str(r.losses),
            "-" if r.score_pct is None else f"{r.score_pct:.1f}%",
            ", ".join(f"{v} {n}" for v, n in sorted(r.forfeits.items())),
        ]
        for r in rows
    ]
    return FitTable(columns, cells, title=title, caption=caption, key=1)


def cross_table(st: Standings) -> Table:
    """Head to head: row bot's W-D-L against the column bot."""
    from referee.commands._safe import SafeTable as Table

    players = [r.player for r in st.board.rows]
    shown = display_names(players)
    table = Table(title="Head to head (row against column: W-D-L)")

    def cell(p: str, q: str) -> str:
        h = st.board.cross.get(p, {}).get(q)
        return "" if h is None else f"{h.wins}-{h.draws}-{h.losses}"

    return _square(table, players, shown, cell, "center")


def los_table(st: Standings) -> Table:
    """Likelihood of superiority: the chance the row bot is stronger than the column bot."""
    from referee.commands._safe import SafeTable as Table

    players = [r.player for r in st.board.rows if r.elo is not None]
    shown = display_names(players)
    table = Table(title="Likelihood of superiority (row stronger than column)")
    if st.board.groups > 1:
        table.caption = "blank: no chain of games links the two bots, so nothing is known"

    def cell(p: str, q: str) -> str:
        value = st.board.los.get(p, {}).get(q)
        return "" if value is None else f"{100 * value:.0f}%"

    return _square(table, players, shown, cell, "right")


def _square(
    table: Table,
    players: list[str],
    shown: Mapping[str, str],
    cell: Callable[[str, str], str],
    justify: Literal["center", "right"],
) -> Table:
    """``table`` with a row and a numbered column per player, ``cell(row, column)`` where
    they meet (``·`` on the diagonal)."""
    table.add_column("bot")
    for i, _ in enumerate(players, start=1):
        table.add_column(str(i), justify=justify)
    for i, p in enumerate(players, start=1):
        table.add_row(f"{i}. {shown[p]}", *("·" if p == q else cell(p, q) for q in players))
    return table


def order_table(st: Standings, confidence: float | None = None) -> Table:
    """How sure the order of each two neighbours in the table is: the likelihood that the
    upper bot is truly stronger (the adaptive format plays until each reaches ``confidence``)."""
    from referee.commands._safe import SafeTable as Table

    pairs = st.board.adjacent_los()
    shown = display_names([p for pair in pairs for p in pair[:2]])
    caption = "P: likelihood the upper bot is stronger than the one below it"
    if confidence is not None:
        caption += f"; settled at {100 * confidence:g}%"
    table = Table(title="Order of neighbours", caption=caption)
    for name in ("#", "upper", "lower", "P(upper stronger)", ""):
        table.add_column(name, justify="right" if name in ("#", "P(upper stronger)") else "left")
    for i, (upper, lower, p) in enumerate(pairs, start=1):
        sure = "" if p is None or confidence is None else ("settled" if p >= confidence else "open")
        text = "?" if p is None else f"{100 * p:.1f}%"
        table.add_row(f"{i}-{i + 1}", shown[upper], shown[lower], text, sure)
    return table


def print_order(st: Standings, t: TournamentInfo | None) -> None:
    """An adaptive tournament's table is followed by how sure each neighbours' order is."""
    if t is None or t.settings.format != "adaptive":
        return
    from referee.tournament.adaptive import DEFAULT_CONFIDENCE

    confidence = float(t.settings.options.get("confidence", DEFAULT_CONFIDENCE))
    console().print(order_table(st, confidence))


def ladder_table(rows: Sequence[LadderRow], title: str) -> Table:
    from referee.commands._safe import SafeTable as Table

    table = Table(title=title, caption="ranked by mu - 3 sigma; provisional while sigma > 6")
    for name in ("#", "bot", "mu - 3σ", "mu", "sigma", "games", ""):
        table.add_column(name, justify="left" if name in ("bot", "") else "right")
    for r in rows:
        table.add_row(
            str(r.rank),
            _short(r.player),
            f"{r.ordinal:.2f}",
            f"{r.mu:.2f}",
            f"{r.sigma:.2f}",
            str(r.games),
            "provisional" if r.provisional else "",
        )
    return table


def table_csv(st: Standings) -> str:
    from referee.ratings.table import CSV_FIELDS

    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(CSV_FIELDS), lineterminator="\n")
    writer.writeheader()
    for r in st.board.rows:
        writer.writerow(r.as_csv_row())
    return out.getvalue()


def table_json(st: Standings, tournament: str | None) -> str:
    data = st.board.as_dict()
    data["tournament"] = tournament
    return json.dumps(data, indent=2) + "\n"


def write_out(target: str, text: str) -> None:
    """Write ``text`` to a file, or to stdout for ``-``; ``ValueError`` with one line when the
    file cannot be written (callers check the path first: :func:`check_output`)."""
    from referee.commands._outpath import write_problem

    if target == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise ValueError(write_problem(target, exc)) from None


def check_output(option: str, target: str) -> str | None:
    """The line to fail with when ``option``'s file cannot be written (``None``: it can)."""
    from referee.commands._outpath import output_problem

    problem = output_problem(target)
    return None if problem is None else f"{option} {problem}"


#: The progress line's tournament name and game count ("123/456"), in columns.
NAME_WIDTH = 16
COUNT_WIDTH = 7


class ProgressDisplay:
    """A rich progress bar with an ETA, fed by the tournament runner."""

    def __init__(self, console: Console, name: str) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.table import Column

        # Every part but the last game's label has a fixed width, and the label gets exactly
        # what is left of the line: rich would otherwise shrink every column at once (at 80
        # columns the count and the ETA became "…"). The tournament name is cut with "…".
        bar = 20 if console.width >= 100 else 12
        widths = (NAME_WIDTH, bar, COUNT_WIDTH, len("games"), 7, len("ETA"), 7)
        left = console.width - sum(widths) - len(widths)

        def fixed(width: int, justify: str = "left") -> Column:
            return Column(
                no_wrap=True,
                min_width=width,
                max_width=width,
                overflow="ellipsis",
                justify=justify,  # type: ignore[arg-type]
            )

        self.progress = Progress(
            TextColumn("[bold]{task.description}", table_column=fixed(NAME_WIDTH)),
            BarColumn(bar_width=bar, table_column=fixed(bar)),
            MofNCompleteColumn(table_column=fixed(COUNT_WIDTH, "right")),
            TextColumn("games", table_column=fixed(len("games"))),
            TimeElapsedColumn(table_column=fixed(7)),
            TextColumn("ETA", table_column=fixed(len("ETA"))),
            TimeRemainingColumn(table_column=fixed(7)),
            *(
                [TextColumn("{task.fields[last]}", style="dim", table_column=fixed(left - 1))]
                if left > 10
                else []
            ),
            console=console,
            transient=False,
        )
        self.name = name
        self.task: TaskID | None = None

    def __enter__(self) -> ProgressDisplay:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def started(self, total: int, done: int) -> None:
        if self.task is None:
            self.task = self.progress.add_task(self.name, total=total, completed=done, last="")
        else:
            self.progress.update(self.task, total=total, completed=done)

    def game_done(self, summary: GameSummary, label: str) -> None:
        if self.task is None:  # the runner calls started() first
            return
        task = next(t for t in self.progress.tasks if t.id == self.task)
        if task.total is not None and task.completed + 1 > task.total:
            self.progress.update(self.task, total=task.completed + 1)
        self.progress.update(self.task, advance=1, last=label[:60])
