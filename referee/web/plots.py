"""Rating history as an SVG line plot, drawn on the server (no script, no inline style)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from xml.sax.saxutils import escape

from markupsafe import Markup

#: Line colours, one per series (a bot's versions), cycling.
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf")
#: At most this many points per series: a long history is thinned evenly (ends kept).
MAX_POINTS = 400


def thin(
    points: Sequence[tuple[datetime, float]], limit: int = MAX_POINTS
) -> list[tuple[datetime, float]]:
    if len(points) <= limit:
        return list(points)
    step = (len(points) - 1) / (limit - 1)
    return [points[round(i * step)] for i in range(limit)]


def rating_plot(
    series: Sequence[tuple[str, Sequence[tuple[datetime, float]]]],
    *,
    width: int = 640,
    height: int = 240,
) -> Markup:
    """One line per ``(label, [(when, rating), ...])``; x is the game count, y the rating."""
    drawn = [(label, thin(points)) for label, points in series if points]
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" '
        'font-size="11" role="img">',
        "<title>Rating history (incremental Elo after each game)</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
    ]
    if not drawn:
        out.append(
            f'<text x="{width / 2:g}" y="{height / 2:g}" text-anchor="middle" fill="#666">'
            "no rated games yet</text></svg>"
        )
        return Markup("".join(out))
    left, right, top, bottom = 48, 12, 12, 28
    values = [float(v) for _, points in drawn for _, v in points]
    low, high = min(values), max(values)
    if high - low < 20:
        low, high = low - 10, high + 10
    longest = max(len(points) for _, points in drawn)

    def x(i: int, n: int) -> float:
        span = max(1, n - 1)
        return float(left + (width - left - right) * i / span)

    def y(v: float) -> float:
        return float(top + (height - top - bottom) * (high - v) / (high - low))

    out += _rating_axes(y, low, high, left, width - right, height)
    for n, (label, points) in enumerate(drawn):
        colour = COLOURS[n % len(COLOURS)]
        path = " ".join(f"{x(i, longest):.1f},{y(v):.1f}" for i, (_, v) in enumerate(points))
        out.append(
            f'<polyline class="series" fill="none" stroke="{colour}" stroke-width="1.8" '
            f'points="{path}"><title>{escape(label)}</title></polyline>'
        )
        out.append(
            f'<text x="{left + 6}" y="{top + 12 + 13 * n}" fill="{colour}">{escape(label)}</text>'
        )
    out.append("</svg>")
    return Markup("".join(out))


def _rating_axes(
    y: Callable[[float], float], low: float, high: float, left: int, right_x: int, height: int
) -> list[str]:
    """Five labelled rating lines from ``low`` to ``high``, and the game axis's name."""
    out = _grid(low, high, left, right_x, y)
    out.append(f'<text x="{right_x}" y="{height - 8}" text-anchor="end" fill="#555">games →</text>')
    return out


@dataclass(frozen=True, slots=True)
class VersionLine:
    """One version on a bot's rating plot: its incremental Elo after each of its games, and its
    maximum-likelihood Elo (the rating its table shows; ``None``: not rated)."""

    label: str
    points: Sequence[tuple[datetime, float]]
    elo: float | None


#: A series with at most this many points has a dot at each (else at its last point only).
DOTS = 60
#: The plot's key: what the two kinds of line are.
KEY = "line: incremental Elo after each game · dashed: maximum-likelihood Elo, the table's rating"


def versions_plot(
    lines: Sequence[VersionLine],
    uploads: Sequence[tuple[str, datetime]],
    *,
    width: int = 640,
    height: int = 240,
) -> Markup:
    """One bot's rating over time, one colour per version: its incremental Elo game by game (a
    line with dots, a lone dot after one game) and, dashed across the plot, the
    maximum-likelihood Elo its table shows, so the plot and the table agree where they meet and
    a key says which is which; a marker (a dashed line and the version's name) where each
    version was uploaded."""
    drawn = [(line, thin(line.points)) for line in lines if line.points or line.elo is not None]
    key_h = 14 * (len(drawn) + 1)
    height += key_h
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" data-plot="versions" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'font-family="sans-serif" font-size="11" role="img">',
        "<title>Rating over time: incremental Elo after each game (line) and the table's "
        "maximum-likelihood Elo (dashed), a marker at each version's upload</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
    ]
    if not drawn:
        return _empty(out, width, height)
    left, right, top, bottom = 48, 12, 22 + key_h, 28
    values = [float(v) for _, points in drawn for _, v in points]
    values += [line.elo for line, _ in drawn if line.elo is not None]
    low, high = min(values), max(values)
    if high - low < 20:
        low, high = low - 10, high + 10
    times = [t.timestamp() for _, points in drawn for t, _ in points]
    times += [t.timestamp() for _, t in uploads]
    start, end = min(times), max(times)
    span = max(end - start, 1.0)

    def x(t: datetime) -> float:
        return float(left + (width - left - right) * (t.timestamp() - start) / span)

    def y(v: float) -> float:
        return float(top + (height - top - bottom) * (high - v) / (high - low))

    out.extend(_grid(low, high, left, width - right, y))
    out.append(
        f'<text x="{width - right}" y="{height - 8}" text-anchor="end" fill="#555">time →</text>'
    )
    out.append(f'<text class="key" x="{left}" y="14" fill="#555">{escape(KEY)}</text>')
    out.extend(_uploads(uploads, x, top, height - bottom))
    for n, (line, points) in enumerate(drawn):
        colour = COLOURS[n % len(COLOURS)]
        out.extend(_version_line(line, points, colour, x, y, (left, width - right)))
        out.append(
            f'<text class="legend" x="{left}" y="{28 + 14 * n}" fill="{colour}">'
            f"{escape(_legend(line, points))}</text>"
        )
    out.append("</svg>")
    return Markup("".join(out))


def _uploads(
    uploads: Sequence[tuple[str, datetime]], x: Callable[[datetime], float], top: int, base: int
) -> list[str]:
    """A dashed marker with the version's name where each version was uploaded."""
    out = []
    for label, when in uploads:
        at = x(when)
        out.append(
            f'<g class="upload"><line x1="{at:.1f}" x2="{at:.1f}" y1="{top - 6}" '
            f'y2="{base}" stroke="#888" stroke-dasharray="4 3"/>'
            f'<text x="{at + 3:.1f}" y="{top - 8}" fill="#555">{escape(label)}</text>'
            f"<title>{escape(label)} uploaded {when:%Y-%m-%d %H:%M}</title></g>"
        )
    return out


def _version_line(
    line: VersionLine,
    points: Sequence[tuple[datetime, float]],
    colour: str,
    x: Callable[[datetime], float],
    y: Callable[[float], float],
    span: tuple[float, float],
) -> list[str]:
    """A version's incremental line with its dots, and its table rating dashed across."""
    label = escape(line.label)
    out = []
    if len(points) > 1:
        path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in points)
        out.append(
            f'<polyline class="series" fill="none" stroke="{colour}" stroke-width="1.8" '
            f'points="{path}"><title>{label}</title></polyline>'
        )
    for t, v in points if len(points) <= DOTS else points[-1:]:
        out.append(
            f'<circle class="dot" cx="{x(t):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}">'
            f"<title>{label}: {v:.0f} after the game of {t:%Y-%m-%d %H:%M}</title></circle>"
        )
    if line.elo is not None:
        out.append(
            f'<line class="ml" data-elo="{line.elo:.0f}" x1="{span[0]}" x2="{span[1]}" '
            f'y1="{y(line.elo):.1f}" y2="{y(line.elo):.1f}" stroke="{colour}" '
            f'stroke-dasharray="6 4" stroke-width="1.2"><title>{label}: {line.elo:.0f}, '
            "the table's maximum-likelihood Elo</title></line>"
        )
    return out


def _legend(line: VersionLine, points: Sequence[tuple[datetime, float]]) -> str:
    """``v2: 1533 after its last game (incremental, 12 games) · 1577 in the table``."""
    parts = []
    if points:
        games = len(line.points)
        after = "its only game" if games == 1 else f"its last game (incremental, {games} games)"
        parts.append(f"{points[-1][1]:.0f} after {after}")
    if line.elo is not None:
        parts.append(f"{line.elo:.0f} in the table")
    return f"{line.label}: " + " · ".join(parts)


def _grid(low: float, high: float, left: int, right: int, y: Callable[[float], float]) -> list[str]:
    """Five horizontal grid lines with their ratings."""
    out = []
    for k in range(5):
        value = low + (high - low) * k / 4
        out.append(
            f'<line x1="{left}" x2="{right}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
            'stroke="#e3e3e3"/>'
            f'<text x="{left - 4}" y="{y(value) + 4:.1f}" text-anchor="end" fill="#555">'
            f"{value:.0f}</text>"
        )
    return out


def _empty(out: list[str], width: int, height: int) -> Markup:
    out.append(
        f'<text x="{width / 2:g}" y="{height / 2:g}" text-anchor="middle" fill="#666">'
        "no rated games yet</text></svg>"
    )
    return Markup("".join(out))
