"""A refereed game (the match runner's report) as the row storage keeps: result, seats,
per-move data and the record in both forms."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from engine.adjudication.verdicts import Verdict
from engine.game import Game
from engine.records import record_to_json, write_record
from referee.match.packs import build_pack, faulted_seat, pack_bytes
from referee.match.records import build_record
from referee.match.runner import GameReport, SeatReport
from referee.storage import BotVersionInfo, FinishedGame, MemoryMeasure, SeatResult

#: How much of a bot's output is stored with each seat.
STDERR_KEEP = 8 * 1024


def finished_game(
    report: GameReport,
    game: Game[Any],
    seats: Sequence[BotVersionInfo],
    *,
    outputs: Sequence[str] = (),
    event: str = "?",
    started: datetime,
    finished: datetime,
    tournament_id: int | None = None,
    pairing_id: int | None = None,
    game_index: int = 0,
    uid: str | None = None,
    voided: bool = False,
) -> FinishedGame:
    """The :class:`FinishedGame` of ``report``; ``seats[i]`` is the version in seat ``i``."""
    end = report.end
    assert end is not None
    # Records and tables name the registered bot version, not what its Hello said.
    for seat_report, v in zip(report.seats, seats, strict=True):
        seat_report.name = v.label
        seat_report.version = seat_report.version or v.version
    record = build_record(report, game, event=event)
    record_json = record_to_json(record, game.seat_names)
    record_json["referee"] = report.summary()
    return FinishedGame(
        game=game.name,
        seats=_seat_results(report, seats, outputs),
        verdict=Verdict(end.verdict),
        winner_seat=end.winner,
        plies=report.plies,
        started_at=started,
        finished_at=finished,
        reason=end.reason,
        offender_seat=end.offender,
        termination=end.termination,
        game_params=dict(game.params),
        moves=_stored_moves(report),
        record_text=write_record(record),
        record_json=record_json,
        tournament_id=tournament_id,
        pairing_id=pairing_id,
        game_index=game_index,
        uid=uid,
        voided=voided,
    )


def _stored_moves(report: GameReport) -> list[dict[str, object]]:
    """Each move as the games table keeps it: who played what, and what it cost."""
    return [
        {
            "ply": m.ply,
            "seat": m.seat,
            "move": m.action,
            "measured_s": round(m.time_s, 6),
            "wall_s": round(m.wall, 6),
            "cpu_s": None if m.cpu_s is None else round(m.cpu_s, 6),
            "reported_s": round(m.think_time_s, 6),
            "memory_bytes": m.peak_rss_bytes,
        }
        for m in report.moves
    ]


def _seat_results(
    report: GameReport, seats: Sequence[BotVersionInfo], outputs: Sequence[str]
) -> list[SeatResult]:
    """Each seat's clock, think time, memory peak (and how it was measured) and output."""
    think = [0.0, 0.0]
    for m in report.moves:
        think[m.seat] += m.think_time_s
    results = []
    for i, (seat_report, v) in enumerate(zip(report.seats, seats, strict=True)):
        output = outputs[i] if i < len(outputs) else ""
        pack = None
        if faulted_seat(report) == i:
            pack = pack_bytes(build_pack(report, i, output=output)).decode()
        results.append(
            SeatResult(
                bot_version_id=v.id,
                time_used_s=seat_report.time_used_s,
                reported_think_s=think[i],
                peak_memory_bytes=seat_report.peak_memory_bytes or None,
                memory_measure=_memory_measure(seat_report),
                stderr=output[-STDERR_KEEP:] or None,
                failure_pack=pack,
            )
        )
    return results


def _memory_measure(seat: SeatReport) -> MemoryMeasure:
    if seat.memory_method == "cgroup":
        return MemoryMeasure.CGROUP
    if seat.sampled_rss_bytes:
        return MemoryMeasure.RSS_POLL
    if seat.peak_rss_bytes:
        return MemoryMeasure.SELF_REPORTED
    return MemoryMeasure.UNKNOWN
