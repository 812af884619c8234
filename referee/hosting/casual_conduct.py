"""What one casual game says about its bots' conduct (sans I/O): who failed to answer and now
cools off, what each is told, and whether the game is rated (see docs/ratings.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.adjudication.verdicts import Verdict
from referee.hosting.casual_pairing import CasualPairing, Seeker
from referee.match.report import GameReport

__all__ = ["NOT_ANSWERING", "CasualSeats", "Settled", "seat_conduct", "settle", "unrated"]

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


@dataclass(frozen=True, slots=True)
class Settled:
    """What one casual game's conduct calls for: the notices to send (seat, text), and the
    stored games to void (a player's run of forfeits it fed, this game aside: it is marked
    unrated instead)."""

    notices: list[tuple[int, str]] = field(default_factory=list)
    voided: list[str] = field(default_factory=list)


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
) -> Settled:
    """Record the game's conduct with ``policy``; mark ``report`` unrated when the loser failed
    to answer without having played (a no-show) or again (on probation), or forfeited again
    (its player feeds wins: the earlier forfeits of the run are voided too)."""
    end = report.end
    settled = Settled()
    if end is None or (end.aborted and no_show is None):
        return settled  # stopped by the referee: it says nothing about the bots
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
        text = f"cooling off: you {how}{repeat}; casual pairing resumes in {cooling.seconds:g} s"
        settled.notices.append((seat, text))
    for seat, seeker in enumerate(seats.seekers):
        _count_forfeit(policy, seat, seeker, report, settled)
    return settled


def _count_forfeit(
    policy: CasualPairing, seat: int, seeker: Seeker, report: GameReport, settled: Settled
) -> None:
    """Count the game in its player's conduct; a player that feeds its opponents' ratings
    (forfeits in a row, or too many among its last games) has its rated forfeits voided
    (this one: marked unrated)."""
    end = report.end
    assert end is not None
    forfeited = not end.aborted and end.offender == seat and end.verdict.is_fault
    answered = any(m.seat == seat and not m.book for m in report.moves)
    rated = not unrated(report)
    fed = policy.forfeit(seeker, report.game_id, forfeited, rated, answered)
    if rated and report.game_id in fed:
        name = report.seat_names[seat]
        report.labels["unrated"] = f"{name}'s player forfeits casual games again and again"
    settled.voided.extend(g for g in fed if g != report.game_id)


def unrated(report: GameReport) -> bool:
    """Whether a casual game is stored without moving any rating."""
    return "unrated" in report.labels
