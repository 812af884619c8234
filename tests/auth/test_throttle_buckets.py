"""The login buckets count attempts still being checked, so a simultaneous burst of wrong
tokens cannot pass the check before the first of them has failed (no clock, no server)."""

from __future__ import annotations

from referee.server.throttle import BucketSpec, LoginThrottle


def _throttle() -> LoginThrottle:
    now = [0.0]
    return LoginThrottle(BucketSpec(3.0, 1.0), BucketSpec(100.0, 1.0), clock=lambda: now[0])


def test_attempts_in_flight_fill_the_address_bucket() -> None:
    """Three attempts admitted at once fill a bucket of three; the fourth is refused."""
    throttle = _throttle()
    admitted = [throttle.check("10.0.0.1", f"id{i}") for i in range(3)]
    assert admitted == [None, None, None]
    refused = throttle.check("10.0.0.1", "id3")
    assert refused is not None and "too many failed logins from 10.0.0.1" in refused.message


def test_a_good_token_takes_its_drops_back() -> None:
    """Attempts released (good tokens) leave the bucket as it was: logins keep getting in."""
    throttle = _throttle()
    for i in range(10):
        assert throttle.check("10.0.0.1", f"id{i}") is None
        throttle.release("10.0.0.1", f"id{i}")
    assert throttle.refused == 0
