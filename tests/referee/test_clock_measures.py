"""What the runner measures for the clocks: each seat's CPU since its last answer, and the
referee's own stalls (loop lag beyond a margin), which are not a bot's time."""

from __future__ import annotations

import pytest

from referee.match.stalls import StallWatch
from referee.match.timing import SeatCpu


def test_cpu_used_between_turns_is_charged_to_the_next_move() -> None:
    """Pondering while the opponent moves shows up in the seat's next move, never lost."""
    used = [0.0, 0.0]
    cpu = SeatCpu([lambda: used[0], lambda: used[1]])
    assert cpu.measured == (True, True)
    used[0] = 0.3  # before the game starts: the interpreter's start-up, not charged
    cpu.mark_all()
    used[0] += 1.0
    assert cpu.since_mark(0, advance=True) == pytest.approx(1.0)
    used[0] += 2.0  # pondering during the opponent's move
    used[0] += 0.5  # its own next move
    assert cpu.since_mark(0) == pytest.approx(2.5)
    assert cpu.since_mark(0, advance=True) == pytest.approx(2.5)
    assert cpu.since_mark(0) == pytest.approx(0.0)


def test_a_seat_without_a_meter_is_not_measured() -> None:
    """A remote seat has no CPU figure at all (not zero)."""
    cpu = SeatCpu([lambda: 1.0, None])
    cpu.mark_all()
    assert cpu.measured == (True, False)
    assert cpu.since_mark(1, advance=True) is None


def test_a_stall_beyond_the_margin_is_counted_only_within_the_asked_interval() -> None:
    """A wake 8 s overdue counts 8 s less the margin, overlapping only the move it fell in, and
    only for what was noticed during it or just after it (else it delayed nothing)."""
    watch = StallWatch(tick=0.05, margin=0.1)
    watch._last = 100.0
    watch.observe(100.06)  # on time: no stall
    assert not watch.stalls
    watch.observe(108.11)  # overdue by 8.0 s: 7.9 s of it counted
    assert len(watch.stalls) == 1
    begin, end = watch.stalls[0]
    assert end - begin == pytest.approx(7.9)
    assert watch.stalled_between(99.0, 108.2, now=108.2) == pytest.approx(7.9)
    assert watch.stalled_between(105.0, 106.0, now=108.2) == pytest.approx(1.0)
    assert watch.stalled_between(108.15, 108.2, now=108.2) == 0.0
    # An answer read 2 s after the pause ended was not held up by it: its time is the bot's.
    for step in range(1, 39):  # the watch ticks on time meanwhile
        watch.observe(108.2 + step * 0.05)
    assert watch.stalled_between(99.0, 110.1, now=110.1) == 0.0
    assert watch.total_between(99.0, 110.1, now=110.1) == pytest.approx(7.9)


def test_jitter_under_the_margin_is_not_a_stall() -> None:
    """Wakes a little late (a busy machine) are the grace's business, not a stall."""
    watch = StallWatch(tick=0.05, margin=0.1)
    watch._last = 0.0
    now = 0.0
    for _ in range(100):
        now += 0.05 + 0.09
        watch.observe(now)
    assert not watch.stalls
