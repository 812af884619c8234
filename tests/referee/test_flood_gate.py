"""The flood rule of a session's stream, on a clock the test sets: the same verdict however
slowly the referee reads."""

from __future__ import annotations

from referee.server.flood import FloodGate


def _read(gate: FloodGate, count: int, start: float, gap: float) -> int:
    """How many of ``count`` unrequested messages read ``gap`` s apart pass before a flood."""
    for number in range(count):
        if not gate.admit(start + number * gap):
            return number
    return count


def test_a_burst_read_at_once_is_a_flood_past_the_burst() -> None:
    """5,000 messages read in the same instant: the 401st is the flood (rate 200, burst 400)."""
    assert _read(FloodGate(200.0, now=0.0), 5000, start=0.0, gap=0.0) == 400


def test_a_burst_read_slowly_by_a_busy_referee_is_still_a_flood() -> None:
    """The same 5,000 messages read 10 ms apart (a referee waiting for the CPU): the time
    between reads would refill the bucket as fast, but the flood is still found at 401."""
    assert _read(FloodGate(200.0, now=0.0), 5000, start=0.0, gap=0.01) == 400


def test_replies_earned_by_the_referee_never_count() -> None:
    """A bot answering each of the referee's messages is never limited, however fast."""
    gate = FloodGate(200.0, now=0.0)
    for _ in range(10_000):
        gate.sent()
        assert gate.admit(0.0)


def test_a_message_of_the_referee_starts_a_new_count() -> None:
    """Unrequested messages within the rate, with the referee writing now and then, pass: 150
    every second for a minute (9,000 in all), each second opened by a message of the referee's;
    without those messages, the same stream is a flood once past the burst."""
    gate = FloodGate(200.0, now=0.0)
    for second in range(60):
        gate.sent()
        assert _read(gate, 151, start=float(second), gap=1 / 150) == 151
    silent = FloodGate(200.0, now=0.0)
    assert _read(silent, 9000, start=0.0, gap=1 / 150) == 400


def test_a_sustained_rate_above_the_limit_is_a_flood() -> None:
    """Without the referee writing, 300 a second (limit 200) runs the bucket dry."""
    gate = FloodGate(200.0, now=0.0)
    assert _read(gate, 2000, start=0.0, gap=1 / 300) < 2000
    assert "more than 400 unrequested messages" in gate.sentence()
