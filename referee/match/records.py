"""Game records of refereed games, in the engine's record format (PGN-like text or JSON).

Built after the game from the :class:`~referee.match.runner.GameReport`, so recording costs nothing
during play. Per move: ``think`` is the bot's own measurement, ``lag`` the referee's measured
wall time minus it (so the referee's wall time is ``think + lag``, also kept as ``wall=``),
``cpu=`` the CPU time the bot's processes used for it (where measured), ``time=`` what the
move was charged on the game's clock (the ``Clock`` tag says which: ``cpu`` or ``wall``),
``stall=`` the referee's own stall not charged to it (only when there was one), ``clock`` the
budget left afterwards and ``mem`` the bot's reported peak memory in MB.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.adjudication.verdicts import RECORD_WORDS
from engine.game import Game
from engine.records import RecordBuilder, record_to_json, write_record
from engine.records.model import GameRecord
from referee.match.report import GameReport, MoveLog

_MB = 1024 * 1024


def build_record(
    report: GameReport,
    game: Game[Any],
    *,
    event: str = "?",
    site: str = "?",
    output_files: dict[int, str] | None = None,
) -> GameRecord:
    """The game record of ``report`` (``game`` is the engine game it was played with).

    ``output_files``: per seat, the file a launched bot's captured output was written to
    (named in a ``<Seat>Output`` tag).
    """
    end = report.end
    assert end is not None
    date = report.started_at[:10].replace("-", ".") if report.started_at else "????.??.??"
    tags = _tags(report, output_files or {})
    builder = RecordBuilder(
        game,
        initial=game.state_from_string(report.initial_position),
        players=(report.seats[0].name, report.seats[1].name),
        event=event,
        site=site,
        date=date,
        time_control=_time_control(report),
        extra_tags=tuple(tags),
    )
    for entry in report.moves:
        if entry.book:
            builder.add(game.move_from_text(entry.action), comment="book")
            continue
        builder.add(
            game.move_from_text(entry.action),
            think=round(entry.think_time_s, 4),
            lag=round(entry.lag_s, 4),
            clock=None if entry.clock_after_s is None else round(entry.clock_after_s, 3),
            mem=round(entry.peak_rss_bytes / _MB, 1) if entry.peak_rss_bytes else None,
            extra=_move_times(entry),
            comment=entry.comment.replace("{", "(").replace("}", ")"),
            search=entry.search,
        )
    # A rules ending is in the record's moves already; a referee verdict gets its word.
    termination = RECORD_WORDS.get(end.verdict)
    return builder.finish(
        result=end.result(),
        termination=termination,
        reason=end.reason,
    )


def _move_times(entry: MoveLog) -> tuple[tuple[str, str], ...]:
    """A move's charged, wall and CPU time (and the referee's stall, if any) as extra data."""
    times = [("time", f"{entry.time_s:.4f}"), ("wall", f"{entry.wall:.4f}")]
    if entry.cpu_s is not None:
        times.append(("cpu", f"{entry.cpu_s:.4f}"))
    if entry.stall_s > 0:
        times.append(("stall", f"{entry.stall_s:.4f}"))
    return tuple(times)


def _tags(report: GameReport, output_files: dict[int, str]) -> list[tuple[str, str]]:
    """The referee's own tags: game id, times, and per seat what was measured. The ending is
    the ``Termination`` tag's alone (a verdict's word, or the rules' ending)."""
    tags: list[tuple[str, str]] = [
        ("GameId", report.game_id),
        ("StartTime", report.started_at),
        ("EndTime", report.finished_at),
        ("MemoryLimitMB", f"{report.memory_limit_bytes / _MB:g}"),
        ("Clock", str(report.time_control.clock)),
    ]
    if report.stalled_s > 0:
        tags.append(("RefereeStalled", f"{report.stalled_s:.3f}"))
    for index, (seat_name, seat) in enumerate(zip(report.seat_names, report.seats, strict=True)):
        prefix = seat_name.capitalize()
        tags += [
            (f"{prefix}Version", seat.version or "?"),
            (f"{prefix}TimeUsed", f"{seat.time_used_s:.3f}"),
            (f"{prefix}WallUsed", f"{seat.wall_used_s:.3f}"),
            (f"{prefix}PeakMB", f"{seat.peak_memory_bytes / _MB:.1f}"),
            (f"{prefix}MemoryMeasure", seat.memory_measured_by),
        ]
        if seat.cpu_used_s is not None:
            tags.append((f"{prefix}CpuUsed", f"{seat.cpu_used_s:.3f}"))
            tags.append((f"{prefix}CpuMeasure", seat.cpu_method or "?"))
        if seat.exit:
            tags.append((f"{prefix}Exit", seat.exit))
        if seat.reconnects:
            tags.append((f"{prefix}Reconnects", str(seat.reconnects)))
        if index in output_files:
            tags.append((f"{prefix}Output", output_files[index]))
    for key, value in report.labels.items():
        tags.append((key[:1].upper() + key[1:], value))
    return tags


def _time_control(report: GameReport) -> str:
    tc = report.time_control
    parts = [f"{tc.game_time_s:g}" if tc.game_time_s else "-"]
    if tc.increment_s:
        parts[0] += f"+{tc.increment_s:g}"
    if tc.move_time_s:
        parts.append(f"move={tc.move_time_s:g}")
    if tc.grace_s:
        parts.append(f"grace={tc.grace_s:g}")
    parts.append(f"clock={tc.clock}")
    return " ".join(parts)


def write_record_file(path: str | Path, report: GameReport, game: Game[Any]) -> None:
    """Write the record: JSON when ``path`` ends in ``.json``, else the PGN-like text.

    A launched bot's captured output (bounded) is kept for its author: inside a JSON record
    (``referee.seats.<SEAT>.output``), else in a side file ``<record>.<seat>.log`` beside the
    text record, named by its ``<Seat>Output`` tag.
    """
    target = Path(path)
    is_json = target.suffix.lower() == ".json"
    files: dict[int, str] = {}
    if not is_json:
        for index, (name, seat) in enumerate(zip(report.seat_names, report.seats, strict=True)):
            if seat.output:
                side = target.with_name(f"{target.name}.{name.lower()}.log")
                side.write_text(seat.output, encoding="utf-8")
                files[index] = side.name
    record = build_record(report, game, output_files=files)
    if is_json:
        data = record_to_json(record, game.seat_names)
        data["referee"] = report.summary()
        for name, seat in zip(report.seat_names, report.seats, strict=True):
            data["referee"]["seats"][name]["output"] = seat.output or None
        data["referee"]["moves"] = [
            {
                "ply": m.ply,
                "seat": report.seat_names[m.seat],
                "action": m.action,
                "time_s": round(m.time_s, 6),
                "wall_s": round(m.wall, 6),
                "cpu_s": None if m.cpu_s is None else round(m.cpu_s, 6),
                "stall_s": round(m.stall_s, 6),
                "think_time_s": round(m.think_time_s, 6),
                "lag_s": round(m.lag_s, 6),
                "peak_rss_bytes": m.peak_rss_bytes,
            }
            for m in report.moves
        ]
        target.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    else:
        target.write_text(write_record(record), encoding="utf-8")
