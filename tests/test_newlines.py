"""`count_newlines` is `bytes.count(b"\\n")`, whatever the lines' lengths and the range."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from frayproof_audit.corpus.inputs.newlines import FIND_FIRST, count_newlines

_TEXT = st.lists(st.sampled_from([b"\n", b"a", b"{}", b"\r\n", b"x" * 300]), max_size=400).map(b"".join)


@given(_TEXT, st.integers(-5, 500), st.integers(-5, 500) | st.none())
def test_equal_to_bytes_count_on_any_range(data: bytes, start: int, stop: int | None) -> None:
    start = max(0, start)
    assert count_newlines(data, start, stop) == data.count(b"\n", start, stop)
    assert count_newlines(bytearray(data), start, stop) == bytearray(data).count(b"\n", start, stop)


def test_long_and_short_lines_on_both_sides_of_the_switch() -> None:
    long_lines = b"".join(b"y" * 5000 + b"\n" for _ in range(FIND_FIRST - 1))
    short_lines = b"z\n" * 10_000
    cases = (long_lines, short_lines, long_lines + short_lines, short_lines + long_lines, b"", b"no newline")
    for data in cases:
        assert count_newlines(data) == data.count(b"\n")
