"""What one casual game says about its bots' conduct (sans I/O): who failed to answer and now
cools off, what each is told, and whether the game is rated (see docs/ratings.md)."""

from __future__ import annotations

from dataclasses import dataclass

from referee.hosting.casual_pairing import CasualPairing, Seeker
from referee.match.report import GameReport
from referee.match.verdicts import Verdict

__all__ = ["NOT_ANSWERING", "CasualSeats", "seat_conduct", "settle", "unrated"]

#: Ways to lose a game by failing to answer: they send a casual bot to cool off.
NOT_ANSWERING = frozenset({Verdict.TIME, Verdict.DISCONNECT})


@dataclass(frozen=True, slots=True)
class CasualSeats:
    """The two seats of a casual game as pairing saw them when it started."""

    seekers: tuple[Seeker, Seeker]
    #: Whether each was on probation (its last casual game ended in its failure to answer).
    probation: tuple[bool, bool]
    #: Each seat's first-move window (``None``: none, it has a clean game on record).
    windows: tuple[float | None, float | None]


def seat_conduct(policy: CasualPairing, first: Seeker, second: Seeker) -> CasualSeats:
    return CasualSeats(
        (first, second),
        (policy.on_probation(first), policy.on_probation(second)),
        (policy.first_move_window(first), policy.first_move_window(second)),
    )


def settle(
    policy: CasualPairing,
    seats: CasualSeats,
    report: GameReport,
    no_show: int | None,
    now: float,
) -> list[tuple[int, str]]:
    """Record the game's conduct with ``policy``; mark ``report`` unrated when the loser failed
    to answer without having played (a no-show) or again (on probation). Returns the notices
    to send: (seat, text)."""
    end = report.end
    if end is None or (end.aborted and no_show is None):
        return []  # stopped by the referee: it says nothing about the bots
    notices = []
    for seat, seeker in enumerate(seats.seekers):
        name = report.seat_names[seat]
        answered = any(m.seat == seat and not m.book for m in report.moves)
        if end.aborted:
            failed = seat == no_show
            how = f"did not make your first move within {seats.windows[seat] or 0:g} s"
        else:
            failed = end.offender == seat and end.verdict in NOT_ANSWERING
            how = f"lost your last casual game by {end.verdict.label}"
            if failed and (not answered or seats.probation[seat]):
                why = "without making a move" if not answered else "again while on probation"
                report.labels["unrated"] = f"{name} lost by {end.verdict.label} {why}"
        cooling = policy.ended(seeker, failed, now, answered)
        if cooling is None:
            continue
        repeat = f" ({cooling.strikes} times in a row)" if cooling.strikes > 1 else ""
        notices.append(
            (
                seat,
                f"cooling off: you {how}{repeat}; casual pairing resumes in {cooling.seconds:g} s",
            )
        )
    return notices


def unrated(report: GameReport) -> bool:
    """Whether a casual game is stored without moving any rating."""
    return "unrated" in report.labels
