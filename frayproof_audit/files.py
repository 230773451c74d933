"""Reading the small files a command is pointed at (contracts, snapshots), safely.

`open()` on a FIFO blocks until a writer appears, and `read()` of `/dev/zero` never ends, so a
mistyped path must not hang a nightly job or exhaust its memory: only regular files are read,
without blocking on open, and never more than a stated number of bytes.
"""

from __future__ import annotations

import os
import stat


class NotARegularFile(ValueError):
    """The path is a folder, FIFO, device or socket, or the file is over the size limit."""


def read_regular_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; `OSError` when it cannot be read."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise NotARegularFile("is a folder")
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFile("is not a regular file (a FIFO, device or socket)")
        if info.st_size > limit:
            raise NotARegularFile(f"is {info.st_size:,} bytes, over the limit of {limit:,}")
        os.set_blocking(descriptor, True)
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = os.read(descriptor, min(1024 * 1024, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:  # the file grew while being read
                raise NotARegularFile(f"is over the limit of {limit:,} bytes")
        return b"".join(chunks)
    finally:
        os.close(descriptor)
