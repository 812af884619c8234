"""Why a game ended, in words: the verdict, the turning point and the loser's worst moves (a
rules end), or what went wrong and at which ply (a fault). Computed from the stored game and
its reference evaluation (:mod:`referee.analysis.gameeval`); pure, so it is tested without a server.

Evaluations are compared on a signed log scale (``sign(x)·log10(1+|x|)``): a Tetress
evaluation counts placements, hundreds early in a game and a handful late, so a plain
difference would always name the opening. Forced wins and losses (the search's ``WIN``
sentinel) sit one step beyond the largest ordinary value and are said in words ("a win in 3"),
never as numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from engine.adjudication import ply_number
from engine.adjudication.verdicts import Verdict
from referee.analysis.gameeval import WIN, Analysis, PlyEval

#: Plies at the start whose swings are not turning points (the first placements' mobility
#: swings are large and mean little).
OPENING_PLIES = 2
#: Marked moves named in a summary, worst first.
WORST_SHOWN = 3
FAULT_WORDS = {
    Verdict.TIME: "it ran out of time (TLE)",
    Verdict.MEMORY: "it went over its memory limit (MLE)",
    Verdict.RUNTIME_ERROR: "its code failed (a runtime error: see its last output)",
    Verdict.ILLEGAL_MOVE: "it answered with a move the rules forbid",
    Verdict.PROTOCOL_ERROR: "it broke the protocol",
    Verdict.DISCONNECT: "its connection dropped and it did not come back in time",
}
GLYPH_WORDS = {"??": "a blunder", "?": "a mistake", "?!": "an inaccuracy", "!": "the only win"}


def symlog(value: float) -> float:
    """``sign(x)·log10(1+|x|)``; a forced result is ±8 (beyond any ordinary evaluation)."""
    if abs(value) > WIN / 2:
        return math.copysign(8.0, value)
    return math.copysign(math.log10(1.0 + abs(value)), value)


def score_words(value: float) -> str:
    """An evaluation for people: ``+12.5``, or ``a win in 3`` / ``a loss in 2``."""
    if value > WIN / 2:
        return f"a win in {max(1, round(WIN - value))}"
    if value < -WIN / 2:
        return f"a loss in {max(1, round(WIN + value))}"
    return f"{value:+.1f}"


def move_sentence(judged: PlyEval) -> str:
    """One sentence on a marked move, e.g. "Missed a win in 1: PLACE(...) wins."."""
    best, played, move = judged.best, judged.played, judged.best_move
    if judged.glyph == "!":
        return "The only move that keeps the forced win."
    if best > WIN / 2 >= played:
        return f"Missed {score_words(best)}: {move} wins."
    if played < -WIN / 2 <= best:
        return f"Walks into {score_words(played)}; {move} holds ({score_words(best)})."
    kind = GLYPH_WORDS.get(judged.glyph or "", "a weaker move").capitalize()
    return (
        f"{kind}: the reference search prefers {move} "
        f"({score_words(best)} against {score_words(played)} for the mover)."
    )


@dataclass(frozen=True, slots=True)
class Point:
    """One line of the summary; ``ply`` links it to that ply of the replay."""

    text: str
    ply: int | None = None


@dataclass(frozen=True, slots=True)
class Story:
    headline: str
    points: tuple[Point, ...]
    #: The turning point's ply, if the summary names one.
    turning_ply: int | None = None
    #: A fault's offender and its last output (only when the viewer may see it).
    output: str = ""
    fault_ply: int | None = None


def turning_point(
    analysis: Analysis, movers: Sequence[int], loser: int
) -> tuple[int, float] | None:
    """The ply where the reference evaluation swung most against ``loser`` (and the swing,
    on the log scale); ``None`` without two judged plies."""
    best: tuple[int, float] | None = None
    previous: float | None = None
    for ply in range(1, len(movers) + 1):
        value = analysis.first_seat_eval(ply, movers[ply - 1])
        if value is None:
            continue
        mine = symlog(value if loser == 0 else -value)
        if previous is not None and ply > OPENING_PLIES:
            swing = previous - mine
            if swing > 0 and (best is None or swing > best[1]):
                best = (ply, swing)
        previous = mine
    return best


def worst_moves(analysis: Analysis, movers: Sequence[int], seat: int) -> list[PlyEval]:
    """``seat``'s moves marked ``?!``, ``?`` or ``??``, worst first."""
    marked = [
        j
        for ply, j in analysis.evals.items()
        if ply <= len(movers) and movers[ply - 1] == seat and j.glyph in ("??", "?", "?!")
    ]
    rank = {"??": 0, "?": 1, "?!": 2}
    marked.sort(key=lambda j: (rank[j.glyph or "?!"], -(j.best - j.played), j.ply))
    return marked[:WORST_SHOWN]


def tell(
    *,
    verdict: Verdict,
    sentence: str,
    winner: int | None,
    offender: int | None,
    seat_names: Sequence[str],
    movers: Sequence[int],
    moves: Sequence[str],
    analysis: Analysis | None,
    output: str | None = None,
    pending: bool = False,
) -> Story:
    """The summary of one game. ``movers``/``moves``: each ply's seat and move; ``output``:
    the offender's last output when the viewer may see it (its owner, an instructor)."""
    if verdict.is_fault and offender is not None:
        return _fault(verdict, sentence, offender, seat_names, len(movers), output)
    if winner is None or analysis is None:
        note = (Point(_PENDING),) if pending and winner is not None else ()
        return Story(sentence, note)
    loser = 1 - winner
    points: list[Point] = []
    turn = turning_point(analysis, movers, loser)
    if turn is not None:
        ply = turn[0]
        judged = analysis.evals[ply]
        before = analysis.first_seat_eval(ply - 1, movers[ply - 2]) if ply > 1 else None
        after = analysis.first_seat_eval(ply, movers[ply - 1])
        side = seat_names[loser]
        swing = ""
        if before is not None and after is not None:
            b, a = (before, after) if loser == 0 else (-before, -after)
            swing = f": the reference evaluation for {side} went from {score_words(b)} to "
            swing += f"{score_words(a)}"
        mover = seat_names[movers[ply - 1]]
        points.append(Point(f"Turning point, ply {ply} ({mover} {moves[ply - 1]}){swing}.", ply))
        if judged.glyph in ("??", "?", "?!") and movers[ply - 1] == loser:
            points.append(Point(move_sentence(judged), ply))
    for judged in worst_moves(analysis, movers, loser):
        if turn is not None and judged.ply == turn[0]:
            continue
        text = f"Ply {judged.ply}, {moves[judged.ply - 1]}{judged.glyph}: {move_sentence(judged)}"
        points.append(Point(text, judged.ply))
    if not points:
        points.append(Point(f"{seat_names[loser]} made no move the reference search marks."))
    return Story(sentence, tuple(points), turn[0] if turn else None)


_PENDING = "The reference evaluation of this game is being computed; reload in a moment."


def _fault(
    verdict: Verdict,
    sentence: str,
    offender: int,
    seat_names: Sequence[str],
    plies: int,
    output: str | None,
) -> Story:
    ply = ply_number(plies)
    who = seat_names[offender]
    points = [
        Point(f"{who} was to play ply {ply} after the position shown at ply {plies}.", plies),
        Point(f"What happened at ply {ply}: {FAULT_WORDS.get(verdict, verdict.label)}."),
    ]
    if output is None:
        points.append(Point(f"{who}'s last output is shown to its owner and to instructors."))
    return Story(sentence, tuple(points), None, (output or "")[-4000:], plies)
