"""Reading the small files a command is pointed at (contracts, snapshots), safely.

`open()` on a FIFO blocks until a writer appears, and `read()` of `/dev/zero` never ends, so a
mistyped path must not hang a nightly job or exhaust its memory: only regular files are read,
without blocking on open, and never more than a stated number of bytes.
"""

from __future__ import annotations

import os
import stat


class UnreadableFile(ValueError):
    """The file cannot be read: the message is the reason (missing, a folder, a FIFO or device,
    over the size limit, ...), for the caller to put after the path."""


def read_regular_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, or `UnreadableFile`."""
    try:
        return _read(path, limit)
    except OSError as exc:
        raise UnreadableFile(exc.strerror or str(exc)) from None


def _read(path: str | os.PathLike[str], limit: int) -> bytes:
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise UnreadableFile("is a folder")
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile("is not a regular file (a FIFO, device or socket)")
        if info.st_size > limit:
            raise UnreadableFile(f"is {info.st_size:,} bytes, over the limit of {limit:,}")
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
                raise UnreadableFile(f"is over the limit of {limit:,} bytes")
        return b"".join(chunks)
    finally:
        os.close(descriptor)
