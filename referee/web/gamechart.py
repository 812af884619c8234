"""The game page's chart: every ply of a stored game as stacked panels of inline SVG, drawn on
the server (no script, no inline style: the pages' content security policy forbids both).

Panels, one x axis (the ply): the reference evaluation (first seat's side), each bot's own
reported score and search depth (only the seats the viewer may see), the legal moves each side
has (computed by the engine), move time (wall; CPU where it was measured), memory and the clock
left. Each ply is a link to that ply of the replay (a transparent column over every panel, with
a tooltip); the current ply is marked. The chart is built once per game and viewer (see
:class:`ChartCache`) and only the marker changes from ply to ply.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from markupsafe import Markup

from referee.web.story import symlog

SEAT_COLOURS = ("#c0392b", "#1f5fa8")
REFERENCE_COLOUR = "#222222"
WIDTH = 680
LEFT, RIGHT = 64, 12
PANEL_H, GAP = 58, 18

Values = Sequence[float | None]


@dataclass(frozen=True, slots=True)
class Series:
    label: str
    colour: str
    #: One value per x position (ply 0 .. plies); ``None``: no point there.
    values: Values
    bars: bool = False


@dataclass(frozen=True, slots=True)
class Panel:
    title: str
    series: tuple[Series, ...]
    #: How a y tick is written (the values may be transformed, e.g. log-scaled).
    tick: Callable[[float], str] = lambda v: f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"
    #: Shown instead of the panel's lines when it has no data yet.
    empty: str = "no data"
    #: Always include 0 on the y axis (signed quantities).
    zero: bool = False


@dataclass(frozen=True, slots=True)
class Chart:
    """A drawn chart: :meth:`at` puts the current-ply marker in."""

    head: str
    tail: str
    plies: int
    height: int

    def at(self, ply: int) -> Markup:
        x = x_of(ply, self.plies)
        marker = (
            f'<line class="now" x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{self.height - 16}" '
            f'stroke="#e67e22" stroke-width="2"/>'
        )
        return Markup(self.head + marker + self.tail)


def x_of(ply: int, plies: int) -> float:
    return LEFT + (WIDTH - LEFT - RIGHT) * ply / max(1, plies)


def log_tick(value: float) -> str:
    """A tick of a log-scaled axis, back in the evaluation's units."""
    if abs(value) >= 7.5:
        return "win" if value > 0 else "loss"
    plain = 10 ** abs(value) - 1
    return f"{'-' if value < 0 else '+' if value > 0 else ''}{plain:.0f}"


def draw(
    panels: Sequence[Panel], plies: int, link: Callable[[int], str], label: Callable[[int], str]
) -> Chart:
    """The chart of ``panels``; ``link(ply)`` is each column's address, ``label(ply)`` its
    tooltip."""
    height = len(panels) * (PANEL_H + GAP) + 24
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="game-chart" width="{WIDTH}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" '
        'font-size="10" role="img">',
        "<title>The game, ply by ply</title>",
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="white"/>',
    ]
    for index, panel in enumerate(panels):
        out.extend(_panel(panel, GAP + index * (PANEL_H + GAP), plies))
    base = height - 10
    for ply in _ticks(plies):
        out.append(
            f'<text x="{x_of(ply, plies):.1f}" y="{base}" text-anchor="middle" '
            f'fill="#555">{ply}</text>'
        )
    head = "".join(out)
    columns = []
    step = (WIDTH - LEFT - RIGHT) / max(1, plies)
    for ply in range(plies + 1):
        x = x_of(ply, plies) - step / 2
        columns.append(
            f'<a href={quoteattr(link(ply))} class="ply-link" data-ply="{ply}">'
            f'<rect x="{x:.1f}" y="0" width="{step:.1f}" height="{height - 16}" '
            f'fill="#000" fill-opacity="0"><title>{escape(label(ply))}</title></rect></a>'
        )
    return Chart(head, "".join(columns) + "</svg>", plies, height)


def _ticks(plies: int) -> list[int]:
    step = max(1, round(plies / 10 / 5) * 5) if plies > 10 else 1
    return list(range(0, plies + 1, step))


def _panel(panel: Panel, top: int, plies: int) -> list[str]:
    out = [
        f'<text class="panel-title" x="{LEFT}" y="{top - 4}" fill="#333" font-weight="bold">'
        f"{escape(panel.title)}</text>",
        f'<rect x="{LEFT}" y="{top}" width="{WIDTH - LEFT - RIGHT}" height="{PANEL_H}" '
        'fill="#fafafa" stroke="#ddd"/>',
    ]
    values = [v for s in panel.series for v in s.values if v is not None]
    if not values:
        out.append(
            f'<text x="{WIDTH / 2:.0f}" y="{top + PANEL_H / 2 + 4:.0f}" text-anchor="middle" '
            f'fill="#888">{escape(panel.empty)}</text>'
        )
        return out
    low, high = min(values), max(values)
    if panel.zero or any(s.bars for s in panel.series):
        low, high = min(low, 0.0), max(high, 0.0)
    if high - low < 1e-9:
        low, high = low - 1, high + 1

    def y(v: float) -> float:
        return top + PANEL_H * (high - v) / (high - low)

    for value in (low, high) if not panel.zero else (low, 0.0, high):
        out.append(
            f'<text x="{LEFT - 4}" y="{y(value) + 3:.1f}" text-anchor="end" fill="#555">'
            f"{escape(panel.tick(value))}</text>"
        )
    if low < 0 < high:
        out.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(0):.1f}" y2="{y(0):.1f}" '
            'stroke="#bbb" stroke-dasharray="3 3"/>'
        )
    out.extend(_drawn(panel, top, plies, y))
    return out


def _drawn(panel: Panel, top: int, plies: int, y: Callable[[float], float]) -> list[str]:
    """The legend and the lines or bars of one panel."""
    out = []
    legend_x = WIDTH - RIGHT - 4
    for series in reversed(panel.series):
        out.append(
            f'<text x="{legend_x}" y="{top - 4}" text-anchor="end" fill="{series.colour}">'
            f"{escape(series.label)}</text>"
        )
        legend_x -= 8 + 6 * len(series.label)
    width = max(1.0, (WIDTH - LEFT - RIGHT) / max(1, plies) * 0.7)
    for series in panel.series:
        if series.bars:
            for ply, v in enumerate(series.values):
                if v is not None:
                    x = x_of(ply, plies) - width / 2
                    y0, y1 = sorted((y(0.0), y(v)))
                    out.append(
                        f'<rect x="{x:.1f}" y="{y0:.1f}" width="{width:.1f}" '
                        f'height="{max(0.5, y1 - y0):.1f}" fill="{series.colour}"/>'
                    )
            continue
        for run in _runs(series.values):
            points = " ".join(f"{x_of(p, plies):.1f},{y(v):.1f}" for p, v in run)
            if len(run) == 1:
                p, v = run[0]
                out.append(
                    f'<circle cx="{x_of(p, plies):.1f}" cy="{y(v):.1f}" r="2" '
                    f'fill="{series.colour}"/>'
                )
            else:
                out.append(
                    f'<polyline class="series" fill="none" stroke="{series.colour}" '
                    f'stroke-width="1.6" points="{points}"/>'
                )
    return out


def _runs(values: Values) -> list[list[tuple[int, float]]]:
    """Stretches of points; a gap of more than two plies breaks a line (each seat's points
    come every other ply)."""
    runs: list[list[tuple[int, float]]] = []
    for ply, v in enumerate(values):
        if v is None:
            continue
        if runs and ply - runs[-1][-1][0] <= 2:
            runs[-1].append((ply, v))
        else:
            runs.append([(ply, v)])
    return runs


def evaluation_panel(first_seat: str, values: Values, pending: bool) -> Panel:
    series = Series(
        "reference", REFERENCE_COLOUR, [None if v is None else symlog(v) for v in values]
    )
    return Panel(
        f"Reference evaluation ({first_seat}'s side, log scale)",
        (series,),
        tick=log_tick,
        empty="being computed (reload in a moment)" if pending else "not available",
        zero=True,
    )


def per_seat(
    seat_names: Sequence[str], columns: Sequence[Values], bars: bool = False
) -> tuple[Series, ...]:
    return tuple(
        Series(name, SEAT_COLOURS[i % 2], columns[i], bars) for i, name in enumerate(seat_names)
    )
