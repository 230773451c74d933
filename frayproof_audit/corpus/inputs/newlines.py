"""Counting newlines at memory speed, whatever the length of the lines.

Planning a JSONL input counts its lines before any worker starts, so the count sits on the
critical path of every run. `bytes.count` compares byte by byte (about 1.6 GB/s here), while
`bytes.find` of one byte is `memchr` and skips a 200 KB record in a few microseconds (about
9 GB/s on a corpus of such records). Long lines are therefore found one by one; once a range
turns out to hold many short lines, the rest is counted.
"""

from __future__ import annotations

FIND_FIRST = 64
"""Newlines located one by one before the rest of a range is counted instead: cheap when lines
are long (a chunk holds only a few), bounded when they are short."""


def count_newlines(data: bytes | bytearray, start: int = 0, stop: int | None = None) -> int:
    """The number of `\\n` bytes in `data[start:stop]`; equal to `data.count(b"\\n", start, stop)`."""
    end = len(data) if stop is None else stop
    position, found = start, 0
    while found < FIND_FIRST:
        newline = data.find(b"\n", position, end)
        if newline < 0:
            return found
        found += 1
        position = newline + 1
    return found + data.count(b"\n", position, end)
