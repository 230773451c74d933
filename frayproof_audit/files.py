"""Reading the small files a command is pointed at (contracts, snapshots), and writing a
command's output file, safely.

`open()` on a FIFO blocks until a writer appears, and `read()` of `/dev/zero` never ends, so a
mistyped path must not hang a nightly job or exhaust its memory: only regular files are read,
without blocking on open, and never more than a stated number of bytes.

An output is written through whatever its path names (`write_through`): a regular file is
replaced atomically, but a rename over a FIFO, a device or a symbolic link would replace *it*
(as root, `-o /dev/null` would replace the system's), so those are written into instead.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
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



def write_through(path: str, data: bytes) -> None:
    """Write `data` to what `path` names, never replacing anything but a regular file.

    A regular file, or nothing yet, is replaced atomically: a new file in the same folder (the
    old file's permission bits kept), then a rename, so a reader never sees half of it. A
    symbolic link is followed and its target written by the same rules, where the target is
    (a dangling link creates its target); the link stays. A FIFO or a device is opened and
    written, as a shell's `>` does (a FIFO waits for its reader). A folder is
    `IsADirectoryError`; every failure is an `OSError`.
    """
    try:
        info: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if info is not None and not stat.S_ISREG(info.st_mode):
        descriptor = os.open(path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))  # never creates
        try:
            _write_all(descriptor, data)
        finally:
            os.close(descriptor)
        return
    _replace(os.path.realpath(path), data, None if info is None else stat.S_IMODE(info.st_mode))


def _replace(target: str, data: bytes, mode: int | None) -> None:
    folder, name = os.path.split(target)
    temporary = os.path.join(folder, f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(temporary, flags, 0o666)  # the umask applies, as for any new file
    try:
        try:
            if mode is not None:
                os.fchmod(descriptor, mode)
            _write_all(descriptor, data)
        finally:
            os.close(descriptor)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]
