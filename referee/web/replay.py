"""A stored game as the game page shows it: positions, the move list, clocks and the verdict.

Positions are replayed from the moves the referee accepted (the stored move list), so a page
never trusts a record's text for the board; the record adds what it alone holds: each move's
clock, annotations and comments. Views are immutable and kept in a small LRU by game id (a
stored game never changes).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from engine.adjudication.verdicts import Verdict
from engine.game import State
from engine.records import GameRecord, RecordedMove, SearchInfo, read_record, record_from_json
from engine.registry import load_game
from engine.render import render_svg
from referee.storage import GameDetail, GameSummary
from referee.storage.browse import VersionName

CACHE_GAMES = 64


@dataclass(frozen=True, slots=True)
class MoveLine:
    ply: int
    seat: int
    seat_name: str
    move: str
    time_s: float | None
    memory_mb: float | None
    clock_s: float | None
    annotation: str | None
    comment: str
    #: The move's wall time and the CPU time its bot used (``None``: not recorded/measured).
    wall_s: float | None = None
    cpu_s: float | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "ply": self.ply,
            "seat": self.seat,
            "seat_name": self.seat_name,
            "move": self.move,
            "time_s": self.time_s,
            "memory_mb": self.memory_mb,
            "clock_s": self.clock_s,
            "wall_s": self.wall_s,
            "cpu_s": self.cpu_s,
            "annotation": self.annotation,
            "comment": self.comment,
        }


@dataclass(frozen=True, slots=True)
class GameView:
    summary: GameSummary
    title: str
    seat_names: tuple[str, ...]
    players: tuple[VersionName | None, ...]
    moves: tuple[MoveLine, ...]
    #: Position strings: before the first move, then after each move.
    positions: tuple[str, ...]
    budget_s: float | None
    sentence: str
    has_text: bool
    has_json: bool
    annotated: bool
    #: The clock the game charged (``cpu`` or ``wall``; ``None``: not recorded).
    clock: str | None = None
    #: Each ply's think record from the record (shown only to those who may see it).
    searches: tuple[SearchInfo | None, ...] = ()
    #: Per position (0 .. plies), each seat's legal-move count (``None``: not known).
    legal: tuple[tuple[int | None, int | None], ...] = ()

    @property
    def plies(self) -> int:
        return len(self.moves)

    def clocks_at(self, ply: int) -> tuple[float | None, ...]:
        """Each seat's clock after ``ply`` moves (the budget before its first move)."""
        clocks: list[float | None] = [self.budget_s] * len(self.seat_names)
        for line in self.moves[:ply]:
            if line.clock_s is not None:
                clocks[line.seat] = line.clock_s
        return tuple(clocks)

    def board_at(self, ply: int, pv: Sequence[str] = ()) -> Markup:
        """The board after ``ply`` moves; ``pv`` (the mover's expected line, starting with
        the move played) is drawn as numbered ghost pieces."""
        game = load_game(self.summary.game, **dict(self.summary.game_params))
        state = game.state_from_string(self.positions[ply])
        # A position read from its string has no history: the last move's cells are the
        # ones filled since the previous position.
        placed = new_cells(game.state_from_string(self.positions[ply - 1]).grid(), state.grid())
        line = pv[1:] if ply and pv and pv[0] == self.moves[ply - 1].move else ()
        return Markup(
            render_svg(
                state,
                cell=30,
                title=f"{self.title}, ply {ply}",
                highlight=placed if ply else (),
                ghosts=ghost_cells(state, line) if line else None,
            )
        )


def new_cells(before: Sequence[str], after: Sequence[str]) -> set[tuple[int, int]]:
    """The cells filled in ``after`` that were empty (or absent) in ``before``."""
    return {
        (r, c)
        for r, row in enumerate(after)
        for c, char in enumerate(row)
        if char != "." and (r >= len(before) or c >= len(before[r]) or before[r][c] == ".")
    }


def legal_counts(state: State[Any]) -> tuple[int | None, int | None]:
    """Each seat's legal-move count in ``state``: both seats where the game can count the
    side not to move (Tetress: ``mobility``), else the side to move's only."""
    mobility = getattr(state, "mobility", None)
    if callable(mobility):
        return int(mobility(0)), int(mobility(1))
    counts: list[int | None] = [None, None]
    if not state.is_over():
        counts[state.to_move] = len(state.legal_moves)
    return counts[0], counts[1]


def ghost_cells(state: State[Any], line: Sequence[str]) -> dict[tuple[int, int], tuple[str, int]]:
    """The cells each move of ``line`` would fill, played out from ``state`` (a copy), with the
    filling seat's grid character and the move's number in the line; stops at a move that
    cannot be played (a PV is the bot's claim, not a checked line)."""
    ahead = state.copy()
    ghosts: dict[tuple[int, int], tuple[str, int]] = {}
    for number, text in enumerate(line, start=1):
        before = ahead.grid()
        try:
            try:
                move = ahead.parse_san(text)
            except Exception:
                move = ahead.game.move_from_text(text)
            ahead.apply(move)
        except Exception:
            break
        after = ahead.grid()
        char = _seat_char(after, new_cells(before, after), ahead)
        # A move's own cells (Tetress: ``coords``), which a line it completes may clear at
        # once; else the cells it filled.
        cells = getattr(move, "coords", None) or new_cells(before, after)
        for r, c in cells:
            if char is not None or after[r][c] != ".":
                ghosts.setdefault((r, c), (char or after[r][c], number))
    return ghosts


def _seat_char(after: Sequence[str], filled: set[tuple[int, int]], state: State[Any]) -> str | None:
    """The grid character of the seat that just moved: from a cell it filled, else (every
    cell cleared at once) its token's character in a game of tokens."""
    for r, c in filled:
        return after[r][c]
    chars = _TOKEN_CHARS.get(state.game.name)
    return chars[1 - state.to_move] if chars is not None else None


#: Each seat's grid character in games where a seat's cells are its tokens.
_TOKEN_CHARS = {"tetress": "rb"}


def verdict_sentence(summary: GameSummary, seat_names: Sequence[str]) -> str:
    """One sentence for people: the result and why (the referee's own reason)."""
    verdict = Verdict(summary.verdict)
    if verdict is Verdict.ABORTED:
        head = "Aborted"
    elif summary.winner_seat is None:
        head = "Draw"
    else:
        head = f"{seat_names[summary.winner_seat]} wins"
    detail = f" ({verdict.label})" if verdict.is_fault else ""
    return result_sentence(head + detail, summary.reason, head)


def result_sentence(head: str, reason: str, result: str) -> str:
    """``head: reason.``, where a reason that closes with the result itself (the rules'
    ``RED has no legal move; BLUE wins``) does not say it a second time."""
    reason = reason.rstrip(". ")
    closing = f"; {result}"
    if reason.lower().endswith(closing.lower()):
        reason = reason[: -len(closing)]
    return f"{head}: {reason}." if reason else f"{head}."


def _record(detail: GameDetail) -> GameRecord | None:
    """The stored record: its JSON form when there is one (quicker to read), else its text."""
    if detail.record_json:
        try:
            return record_from_json(detail.record_json, verify=False)
        except Exception:
            pass
    if not detail.record_text:
        return None
    try:
        return read_record(detail.record_text, verify=False)
    except Exception:
        return None


def _clock(detail: GameDetail, record: GameRecord | None) -> str | None:
    """Which clock the game charged: the record's ``Clock`` tag, else its JSON summary's."""
    tag = record.tag("Clock") if record is not None else None
    if tag:
        return tag
    referee = (detail.record_json or {}).get("referee")
    clock = referee.get("clock") if isinstance(referee, Mapping) else None
    return str(clock) if clock else None


def _budget(detail: GameDetail, record: GameRecord | None) -> float | None:
    referee = (detail.record_json or {}).get("referee")
    if isinstance(referee, Mapping):
        control = referee.get("time_control")
        if isinstance(control, Mapping) and control.get("game_time_s"):
            return float(control["game_time_s"])
    if record is not None and record.time_control:
        try:
            return float(record.time_control.split()[0])
        except ValueError:
            return None
    return None


def _seconds(
    stored: Mapping[str, Any], key: str, rec: RecordedMove | None, extra: str
) -> float | None:
    """A move's time from its stored row (``key``), else from its record's extra data."""
    value = stored.get(key)
    if value is None and rec is not None:
        value = dict(rec.extra).get(extra)
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def build_view(detail: GameDetail, names: Mapping[int, VersionName]) -> GameView:
    s = detail.summary
    game = load_game(s.game, **dict(s.game_params))
    record = _record(detail)
    recorded: Sequence[RecordedMove] = record.moves if record is not None else ()
    state = game.new_state()
    positions = [state.to_string()]
    legal = [legal_counts(state)]
    lines = []
    for i, m in enumerate(detail.moves):
        text = str(m.get("move", ""))
        seat = int(m.get("seat", i % 2))
        try:
            state.apply(game.move_from_text(text))
        except Exception:
            # A stored move the engine refuses ends the replay there; the list stays whole.
            break
        positions.append(state.to_string())
        legal.append(legal_counts(state))
        rec = recorded[i] if i < len(recorded) else None
        memory = m.get("memory_bytes")
        lines.append(
            MoveLine(
                ply=i + 1,
                seat=seat,
                seat_name=game.seat_names[seat] if seat < 2 else str(seat),
                move=rec.san if rec is not None else text,
                time_s=float(m["measured_s"]) if m.get("measured_s") is not None else None,
                memory_mb=float(memory) / 2**20 if memory else None,
                clock_s=rec.clock if rec is not None else None,
                annotation=rec.annotation if rec is not None else None,
                comment=rec.comment if rec is not None else "",
                wall_s=_seconds(m, "wall_s", rec, "wall"),
                cpu_s=_seconds(m, "cpu_s", rec, "cpu"),
            )
        )
    return GameView(
        summary=s,
        title=game.title,
        seat_names=tuple(game.seat_names),
        players=tuple(names.get(seat.bot_version_id) for seat in s.seats),
        moves=tuple(lines),
        positions=tuple(positions),
        budget_s=_budget(detail, record),
        sentence=verdict_sentence(s, game.seat_names),
        has_text=bool(detail.record_text),
        has_json=bool(detail.record_json),
        annotated=any(line.annotation or line.comment for line in lines),
        clock=_clock(detail, record),
        legal=tuple(legal),
        searches=tuple(
            recorded[i].search if i < len(recorded) else None for i in range(len(lines))
        ),
    )


class ViewCache:
    """Game views by game id, least recently used dropped first (thread-safe)."""

    def __init__(self, size: int = CACHE_GAMES) -> None:
        self.size = size
        self._views: OrderedDict[int, tuple[GameView, GameDetail]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, game_id: int) -> tuple[GameView, GameDetail] | None:
        with self._lock:
            found = self._views.get(game_id)
            if found is not None:
                self._views.move_to_end(game_id)
            return found

    def put(self, game_id: int, value: tuple[GameView, GameDetail]) -> None:
        with self._lock:
            self._views[game_id] = value
            while len(self._views) > self.size:
                self._views.popitem(last=False)


def format_clock(seconds: float | None) -> str:
    """``m:ss.s`` for a clock (``—`` for none); a negative remainder shows as 0."""
    if seconds is None:
        return "—"
    tenths = round(max(0.0, float(seconds)) * 10)
    minutes, rest = divmod(tenths, 600)
    return f"{minutes}:{rest // 10:02d}.{rest % 10}"
