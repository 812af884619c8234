"""BoundedCapture and the MemoryError rule, on plain bytes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from referee.sandbox import BoundedCapture, MemoryPolicy, looks_like_memory_error
from referee.sandbox.memory import format_mb


def test_short_stream_is_kept_whole() -> None:
    """Output within the budget comes back byte for byte, with no marker."""
    cap = BoundedCapture(100)
    cap.feed(b"hello ")
    cap.feed(b"world\n")
    assert cap.getvalue() == b"hello world\n"
    assert cap.dropped_bytes == 0


def test_long_stream_keeps_head_and_tail_with_marker() -> None:
    """Output over the budget keeps its first and last halves and says how much is missing."""
    cap = BoundedCapture(10)
    cap.feed(b"0123456789" * 3)
    assert cap.dropped_bytes == 20
    assert cap.getvalue() == b"01234\n[... 20 bytes of output dropped ...]\n56789"
    assert cap.text().startswith("01234")


@given(st.lists(st.binary(max_size=50), max_size=40), st.integers(2, 64))
def test_capture_equals_head_and_tail_of_the_stream(chunks: list[bytes], limit: int) -> None:
    """For any chunking, the kept bytes are exactly the stream's head and tail halves, and
    memory stays bounded."""
    cap = BoundedCapture(limit)
    for chunk in chunks:
        cap.feed(chunk)
        assert len(cap._head) + len(cap._tail) <= 2 * limit + 50
    stream = b"".join(chunks)
    head, tail = limit // 2, limit - limit // 2
    if len(stream) <= limit:
        assert cap.getvalue() == stream
    else:
        assert cap.dropped_bytes == len(stream) - limit
        value = cap.getvalue()
        assert value.startswith(stream[:head])
        assert value.endswith(stream[-tail:])
    kept_tail = len(stream) if cap.dropped_bytes == 0 else tail
    assert cap.tail_bytes(5) == stream[len(stream) - min(5, kept_tail) :]


def test_memory_error_rule_matches_final_tracebacks() -> None:
    """A traceback ending in MemoryError (Python's or NumPy's) or a C++ bad_alloc is
    recognised; other final errors, or a MemoryError mentioned earlier, are not."""
    py = (
        b'Traceback (most recent call last):\n  File "b.py", line 3\n    x = [0] * n\nMemoryError\n'
    )
    np_err = (
        b"Traceback (most recent call last):\n  ...\n"
        b"numpy.core._exceptions._ArrayMemoryError: Unable to allocate 7.45 GiB for an array\n"
    )
    cpp = b"terminate called after throwing an instance of 'std::bad_alloc'\n  what():  x\n"
    other = b"MemoryError caught, carrying on\nTraceback:\n  ...\nKeyError: 'unrelated'\n"
    assert looks_like_memory_error(py)
    assert looks_like_memory_error(np_err)
    assert looks_like_memory_error(cpp)
    assert not looks_like_memory_error(other)
    assert not looks_like_memory_error(b"")


def test_policy_derives_the_hard_caps() -> None:
    """RLIMIT_DATA and the cgroup cap are the limit plus their headrooms, in MiB."""
    p = MemoryPolicy(250)
    assert p.limit_bytes == 250 * 2**20
    assert p.rlimit_data_bytes == (250 + 256) * 2**20
    assert p.cgroup_limit_bytes == (250 + 32) * 2**20
    assert p.label() == "250 MB"
    assert format_mb(int(263.14 * 2**20)) == "263.1 MB"
