"""Failure packs: cut one faulted seat's side of a finished game out of its report.

A pack (format in docs/records.md, read by :mod:`client_sdk.packs`) holds the game and its
parameters, the exact messages the referee sent the seat and what the seat answered, with
times, the bot's version, the tail of its output, its memory and time per move, and the
verdict and its sentence. It holds nothing of the opponent the bot itself was not sent: no
opponent output, memory, comments or answers.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from client_sdk.packs import (
    FORMAT,
    MAX_PACK_BYTES,
    MAX_TEXT,
    OUTPUT_TAIL_CHARS,
    VERSION,
    encode,
)
from client_sdk.proto import referee_pb2 as pb
from engine.adjudication.verdicts import Verdict, ply_number
from referee.match.report import GameReport
from referee.match.transcript import Answered, Happened, Sent

#: Folders never part of a bot's code digest.
_SKIPPED = frozenset({"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache"})
#: The verdicts that are a seat's fault (a pack is written for the offender).
FAULTS = frozenset(
    {
        Verdict.TIME,
        Verdict.MEMORY,
        Verdict.ILLEGAL_MOVE,
        Verdict.RUNTIME_ERROR,
        Verdict.PROTOCOL_ERROR,
        Verdict.DISCONNECT,
    }
)


def faulted_seat(report: GameReport) -> int | None:
    """The seat whose fault ended the game, if one did."""
    end = report.end
    if end is None or end.verdict not in FAULTS or end.offender is None:
        return None
    return end.offender


def build_pack(report: GameReport, seat: int, *, output: str | None = None) -> dict[str, Any]:
    """The pack of ``seat`` in ``report`` (any seat; normally :func:`faulted_seat`);
    ``output``: the bot's output when the report does not hold it."""
    end = report.end
    assert end is not None
    seat_report = report.seats[seat]
    control = report.time_control
    own = [m for m in report.moves if m.seat == seat and not m.book]
    return {
        "format": FORMAT,
        "version": VERSION,
        "game_id": report.game_id,
        "game": report.game,
        "params": dict(report.params),
        "seat": seat,
        "seat_name": report.seat_names[seat],
        "bot": {"name": seat_report.name, "version": seat_report.version},
        "limits": {
            "game_time_s": control.game_time_s,
            "move_time_s": control.move_time_s,
            "increment_s": control.increment_s,
            "grace_s": control.grace_s,
            "memory_limit_bytes": report.memory_limit_bytes,
            # Which clock the game charged (docs/limits.md); a local replay can only count wall
            # time, so a CPU clock's verdict is reproduced on wall time.
            "clock": str(control.clock),
        },
        "sandbox": report.labels.get("sandbox", ""),
        "seed": seat_report.seed,
        "opening": [m.action for m in report.moves if m.book],
        "started_at": report.started_at,
        "verdict": str(end.verdict),
        "termination": str(end.termination),
        "reason": end.reason,
        "offender": end.offender,
        "fault_ply": ply_number(report.plies) if end.offender == seat else None,
        "exit": seat_report.exit,
        "peak_memory_bytes": max(seat_report.peak_rss_bytes, seat_report.sampled_rss_bytes),
        "memory_method": seat_report.memory_method,
        "moves": [
            {
                "ply": ply_number(m.ply),
                "time_s": round(m.time_s, 6),
                "think_time_s": round(m.think_time_s, 6),
                "peak_rss_bytes": m.peak_rss_bytes,
            }
            for m in own
        ],
        "output_tail": (output or seat_report.output)[-OUTPUT_TAIL_CHARS:],
        "messages": _messages(report, seat),
    }


def _messages(report: GameReport, seat: int) -> list[dict[str, Any]]:
    transcript = report.transcript
    if transcript is None:
        return []
    out: list[dict[str, Any]] = []
    for entry in transcript.seats[seat]:
        at = round(entry.at - transcript.started, 6)
        if isinstance(entry, Sent):
            out.append({"t": at, "to_bot": encode(entry.data)})
        elif isinstance(entry, Answered):
            out.append({"t": at, "from_bot": encode(_bounded(entry.move))})
        elif isinstance(entry, Happened):
            out.append({"t": at, "event": entry.kind, "detail": entry.detail[:2000]})
    return out


def _bounded(move: pb.Move) -> bytes:
    """A received move with its free texts cut to what the referee keeps, so a bot cannot
    swell its own pack (a longer action is a protocol error, kept long enough to show it)."""
    if len(move.comment) <= MAX_TEXT and len(move.action) <= MAX_TEXT and not move.not_a_move:
        return move.SerializeToString()
    kept = pb.Move()
    kept.CopyFrom(move)
    kept.comment = move.comment[:MAX_TEXT]
    kept.action = move.action[: MAX_TEXT + 1]
    if move.HasField("not_a_move"):
        kept.not_a_move.returned = move.not_a_move.returned[:MAX_TEXT]
        kept.not_a_move.expected = move.not_a_move.expected[:MAX_TEXT]
    return kept.SerializeToString()


def pack_bytes(pack: dict[str, Any]) -> bytes:
    """The pack as written; its output tail is cut further if the whole would be too big."""
    data = json.dumps(pack, separators=(",", ":")).encode()
    if len(data) > MAX_PACK_BYTES:
        pack = {**pack, "output_tail": "", "truncated": True}
        data = json.dumps(pack, separators=(",", ":")).encode()
    return data


def write_pack(path: str | Path, pack: dict[str, Any]) -> Path:
    """Write ``pack`` to ``path`` (owner-only: it is the bot author's); returns the path."""
    target = Path(path)
    data = pack_bytes(pack)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return target


def code_digest(roots: Sequence[Path]) -> str:
    """The first 12 hex digits of the SHA-256 of a bot's source files under ``roots`` (each
    file's path relative to its root, and its bytes; caches and VCS folders left out), so a
    pack says which code faulted; empty when there is no source here (an installed module)."""
    digest = hashlib.sha256()
    found = False
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            if _SKIPPED.intersection(path.parts) or path.suffix == ".pyc":
                continue
            found = True
            name = path.name if path == root else path.relative_to(root).as_posix()
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12] if found else ""


def pack_path(record: str | Path, seat_name: str) -> Path:
    """Where ``referee match --record FILE`` puts a seat's pack: beside the record."""
    record = Path(record)
    stem = record.name.split(".")[0] or record.name
    return record.with_name(f"{stem}.{seat_name.lower()}.failure.json")
