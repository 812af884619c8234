"""The fixed vocabulary of how a game ends, and the sentence that says why.

Bot authors see these words in results, logs and records, so they never change meaning:
``normal`` (the rules ended the game), ``turn_limit``, ``time`` (TLE), ``memory`` (MLE),
``illegal_move``, ``runtime_error``, ``protocol_error``, ``disconnect``, and ``aborted`` (the
referee stopped the game: no result, never a loss).

Every sentence a referee (real or local) says about a game is built here, so the same event
reads the same wherever it happened.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from engine.outcome import Outcome, Termination, points, result_text


class Verdict(enum.StrEnum):
    """How a game ended, from the referee's point of view."""

    NORMAL = "normal"
    TURN_LIMIT = "turn_limit"
    TIME = "time"
    MEMORY = "memory"
    ILLEGAL_MOVE = "illegal_move"
    RUNTIME_ERROR = "runtime_error"
    PROTOCOL_ERROR = "protocol_error"
    DISCONNECT = "disconnect"
    ABORTED = "aborted"

    @property
    def label(self) -> str:
        """The short label bot authors know (TLE, MLE, ...)."""
        return _LABELS[self]

    @property
    def is_fault(self) -> bool:
        """True when one seat lost by breaking a limit or the protocol, not by the rules."""
        return self not in (Verdict.NORMAL, Verdict.TURN_LIMIT, Verdict.ABORTED)


_LABELS = {
    Verdict.NORMAL: "normal end",
    Verdict.TURN_LIMIT: "turn limit",
    Verdict.TIME: "TLE",
    Verdict.MEMORY: "MLE",
    Verdict.ILLEGAL_MOVE: "illegal move",
    Verdict.RUNTIME_ERROR: "runtime error",
    Verdict.PROTOCOL_ERROR: "protocol error",
    Verdict.DISCONNECT: "disconnect",
    Verdict.ABORTED: "aborted",
}

#: The word a game record's ``Termination`` tag uses for each referee verdict (the rules'
#: own endings are written by the rules); every fault and ``aborted`` has one.
RECORD_WORDS: dict[Verdict, str] = {
    Verdict.TIME: "time_forfeit",
    Verdict.MEMORY: "memory_limit",
    Verdict.ILLEGAL_MOVE: "illegal_move",
    Verdict.RUNTIME_ERROR: "crash",
    Verdict.PROTOCOL_ERROR: "invalid_reply",
    Verdict.DISCONNECT: "disconnect",
    Verdict.ABORTED: "abandoned",
}

#: A game's detailed termination: the rules' own for a normal end or turn limit, else the
#: verdict itself (``time``, ``memory``, ...).
Ending = Termination | Verdict


def parse_ending(text: str) -> Ending:
    """The termination named by ``text`` (from a message or a stored row).

    Raises :class:`ValueError` for a word in neither vocabulary.
    """
    try:
        return Termination(text)
    except ValueError:
        return Verdict(text)


@dataclass(frozen=True, slots=True)
class GameEnd:
    """The end of one game: winner seat (``None``: draw or aborted), verdict, details.

    ``termination`` is the engine's rules termination for a normal end or turn limit, else
    the verdict itself; ``offender`` is the seat at fault for a fault verdict.
    """

    verdict: Verdict
    winner: int | None
    termination: Ending
    reason: str
    offender: int | None = None

    @property
    def aborted(self) -> bool:
        return self.verdict is Verdict.ABORTED

    def result(self) -> str:
        """PGN-style result: ``1-0``, ``0-1``, ``1/2-1/2``, or ``*`` when aborted."""
        return result_text(self.winner, aborted=self.aborted)

    def score(self, seat: int) -> float:
        """Points ``seat`` earned (0 for both seats of an aborted game)."""
        return points(seat, self.winner, aborted=self.aborted)

    def winner_name(self, seat_names: Sequence[str]) -> str:
        """The winning seat's name, ``DRAW`` or ``ABORTED``."""
        if self.aborted:
            return "ABORTED"
        return "DRAW" if self.winner is None else seat_names[self.winner]


# Sentences for the rules' own endings; {winner}/{loser} are seat names.
_RULES_SENTENCES: dict[Termination, str] = {
    Termination.NO_LEGAL_MOVE: "{loser} has no legal move; {winner} wins",
    Termination.TURN_LIMIT: "the turn limit was reached after {plies} moves; {winner} wins",
    Termination.TOP_ROW: "a block was left in the top row; {winner} wins",
    Termination.REPETITION: "the same well occurred twice; {winner} wins",
    Termination.TURNS_SURVIVED: "{winner} survived every turn; {winner} wins",
    Termination.ROWS_CLEARED: "{winner} cleared the row quota; {winner} wins",
    Termination.FOUR_ROWS: "{winner} cleared four rows at once; {winner} wins",
    Termination.NO_ENTRY: "the chosen piece had no legal entry; {winner} wins",
}


def rules_end(outcome: Outcome, seat_names: Sequence[str], plies: int) -> GameEnd:
    """The :class:`GameEnd` for an outcome reached under the rules."""
    termination = outcome.termination
    turn_limit = termination is Termination.TURN_LIMIT
    verdict = Verdict.TURN_LIMIT if turn_limit else Verdict.NORMAL
    if outcome.winner is None:
        if turn_limit:
            reason = f"the turn limit was reached after {plies} moves; draw"
        else:
            reason = f"draw ({termination})"
    else:
        template = _RULES_SENTENCES.get(termination, "{winner} wins ({termination})")
        reason = template.format(
            winner=seat_names[outcome.winner],
            loser=seat_names[1 - outcome.winner],
            plies=plies,
            termination=termination,
        )
    return GameEnd(verdict, outcome.winner, termination, reason)


def fault(verdict: Verdict, offender: int, reason: str) -> GameEnd:
    """A game lost by ``offender`` for ``verdict``; the other seat wins."""
    return GameEnd(verdict, 1 - offender, verdict, reason, offender)


def aborted(reason: str) -> GameEnd:
    """A game the referee stopped: no winner, no loser."""
    return GameEnd(Verdict.ABORTED, None, Verdict.ABORTED, reason)


def ply_number(ply: int) -> int:
    """The number people are shown for the move at protocol ply ``ply`` (which counts from 0).

    The one numbering of every page, sentence, failure pack and replay (docs/records.md):
    ply N is the game's N-th move, counting from 1 (book moves included), and the board "at
    ply N" is the position after it (ply 0: the start).
    """
    return ply + 1


def time_sentence(
    seat: str, used: float, allowed: float, move_number: int | None, clock: str = "wall time"
) -> str:
    """E.g. ``BLUE exceeded its CPU time: used 2.31 s of 2.00 s for ply 17`` (``clock`` names
    the clock that ran out: ``CPU time`` or ``wall time``; ``move_number``: the
    :func:`ply_number` of the move, None: the game's whole budget)."""
    scope = f"for ply {move_number}" if move_number is not None else "for the game"
    return f"{seat} exceeded its {clock}: used {used:.2f} s of {allowed:.2f} s {scope}"


def backstop_sentence(
    seat: str, waited: float, backstop: float, cpu: float | None, allowed: float, move_number: int
) -> str:
    """E.g. ``BLUE ran out of wall time: no answer for ply 4 after 11.00 s (the backstop of a CPU
    clock), having used 0.01 s of 2.00 s CPU time; a bot that blocks or sleeps ends here``."""
    used = "an unmeasured amount" if cpu is None else f"{cpu:.2f} s"
    return (
        f"{seat} ran out of wall time: no answer for ply {move_number} after {waited:.2f} s "
        f"(the backstop of a CPU clock, {backstop:.2f} s), having used {used} of "
        f"{allowed:.2f} s CPU time; a bot that blocks or sleeps ends here"
    )


def memory_sentence(seat: str, peak_bytes: int, limit_bytes: int, how: str) -> str:
    """E.g. ``RED exceeded its memory: peak 312.4 MB of 250 MB (self-reported)``."""
    mb = 1024 * 1024
    return (
        f"{seat} exceeded its memory: peak {peak_bytes / mb:.1f} MB of "
        f"{round(limit_bytes / mb, 1):g} MB ({how})"
    )


def illegal_sentence(seat: str, action: str, detail: str) -> str:
    """E.g. ``RED played an illegal move PLACE(...): cell 3-4 is occupied``."""
    return f"{seat} played an illegal move {action}: {detail}"


def unreadable_sentence(seat: str, action: str, detail: str) -> str:
    """E.g. ``RED sent a move that cannot be read 'PLACE(': ...`` (long texts shortened)."""
    shown = action if len(action) <= 80 else action[:77] + "..."
    return f"{seat} sent a move that cannot be read {shown!r}: {detail}"


def not_a_move_sentence(seat: str, returned: str, expected: str) -> str:
    """E.g. ``BLUE returned None, which is not a PlaceAction``."""
    what = f"a {expected[:80]}" if expected else "a move"
    return f"{seat} returned {returned[:80] or 'None'}, which is not {what}"


def bot_failed_sentence(seat: str, detail: str, limit: int = 256) -> str:
    """E.g. ``RED's bot failed: RuntimeError: boom`` (the last line of its report)."""
    text = detail.strip()
    last = text.splitlines()[-1] if text else "no details"
    return f"{seat}'s bot failed: {last[:limit]}"


def disconnect_sentence(seat: str, why: str, window_s: float | None = None) -> str:
    """E.g. ``RED disconnected (the connection was lost) and did not reconnect within 10 s``."""
    sentence = f"{seat} disconnected ({why})"
    if window_s is not None:
        sentence += f" and did not reconnect within {window_s:g} s"
    return sentence
