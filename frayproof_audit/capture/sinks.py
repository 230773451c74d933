"""Where lines go: local files appended whole, or objects uploaded whole to an fsspec filesystem.

Both lay files out as `audit` reads them: `ROOT/log_date=YYYY-MM-DD/<host>-<pid>-<start>.jsonl`
(`.jsonl.gz` when compressed). A file belongs to one process, so no two processes ever append to
the same file, and one lock orders the threads of a process: each line is one `write()` of
whole bytes, and a write the disk cuts short is cut back off the file, so a file only ever holds
whole lines. A process that dies (SIGKILL) inside a write can leave at most that one line torn,
at the end of its own file.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import os
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

KEPT_NAMES = 4096
"""How many of the files (objects) it created a sink remembers, newest kept."""
_START_LOCK = threading.Lock()
_last_start = 0
_NLINK_CHECK_SECONDS = 1.0
_OBJECT_STORES = frozenset({"s3", "s3a", "gs", "gcs", "abfs", "abfss", "az", "adl", "oss", "memory"})
"""Protocols whose objects need no folders: `makedirs` there is skipped (on S3 it would even
create a missing bucket, which a log writer must never do)."""
_OPEN_NIGHTS = 2
"""Files kept open per process: tonight's, and the night before for records logged late."""


def host_name(name: str | None = None) -> str:
    """The host part of file names: letters, digits, `.` and `-`, never leading `.`/`_` (which
    `audit` skips as hidden or Spark bookkeeping files)."""
    raw = socket.gethostname() if name is None else name
    cleaned = re.sub(r"[^A-Za-z0-9.-]+", "-", raw).lstrip(".-_")[:64]
    return cleaned or "host"


def start_stamp() -> str:
    """A UTC time with microseconds that strictly increases within the process, so two files
    opened in the same microsecond still get different names."""
    global _last_start
    with _START_LOCK:
        now = time.time_ns() // 1000
        _last_start = now = max(now, _last_start + 1)
    moment = datetime.fromtimestamp(now // 1_000_000, tz=UTC)
    return f"{moment:%Y%m%dT%H%M%S}{now % 1_000_000:06d}Z"


def _reset_start_lock() -> None:
    global _START_LOCK
    _START_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_reset_start_lock)


@dataclass
class _Open:
    """One local file this process appends to."""

    path: str
    fd: int
    size: int = 0
    checked: float = field(default_factory=time.monotonic)


class LocalSink:
    """Appends lines to this process's files under a local folder."""

    def __init__(self, root: str, suffix: str, host: str, max_file_bytes: int,
                 gzip_level: int | None) -> None:
        self.root = root
        self.suffix = suffix
        self.host = host
        self.max_file_bytes = max_file_bytes
        self.gzip_level = gzip_level
        self.lock = threading.Lock()
        self.files: deque[str] = deque(maxlen=KEPT_NAMES)
        self._open: dict[str, _Open] = {}

    def encode(self, line: bytes) -> bytes:
        """The bytes one record adds to a file: the line, or one gzip member holding it (a
        file of members is one gzip stream, and a torn member costs only its own line)."""
        if self.gzip_level is None:
            return line
        return gzip.compress(line, compresslevel=self.gzip_level, mtime=0)

    def write(self, night: str, data: bytes) -> None:
        """Append `data` (whole lines) to this process's file for `night`; OSError on failure,
        after cutting a short write back off the file."""
        with self.lock:
            handle = self._handle(night)
            offset = handle.size
            view = memoryview(data)
            done = 0
            try:
                while done < len(data):
                    wrote = os.write(handle.fd, view[done:])
                    if wrote <= 0:  # pragma: no cover - regular files report errors instead
                        raise OSError(errno.EIO, "write wrote nothing")
                    done += wrote
            except OSError:
                if done:
                    self._cut_back(handle, night, offset)
                raise
            handle.size += len(data)
            if handle.size >= self.max_file_bytes:
                self._close(night)

    def _cut_back(self, handle: _Open, night: str, offset: int) -> None:
        """A write stopped part way (a full disk, a size limit): remove its bytes, or, if that
        fails too, stop using the file so nothing is ever appended after the torn bytes."""
        try:
            os.ftruncate(handle.fd, offset)
        except OSError:
            self._close(night)

    def _handle(self, night: str) -> _Open:
        handle = self._open.pop(night, None)
        if handle is not None:
            if self._still_there(handle):
                self._open[night] = handle  # most recently used last
                return handle
            with contextlib.suppress(OSError):  # deleted or moved away under us: a new file
                os.close(handle.fd)
        while len(self._open) >= _OPEN_NIGHTS:
            self._close(next(iter(self._open)))  # the night moved on: the oldest file is done
        folder = os.path.join(self.root, f"log_date={night}")
        os.makedirs(folder, exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        while True:
            path = os.path.join(folder, f"{self.host}-{os.getpid()}-{start_stamp()}{self.suffix}")
            try:
                fd = os.open(path, flags, 0o644)
            except FileExistsError:  # pragma: no cover - another host with our name and pid
                continue
            break
        handle = self._open[night] = _Open(path, fd)
        self.files.append(path)
        return handle

    @staticmethod
    def _still_there(handle: _Open) -> bool:
        """Whether the file is still at its path (looked at once a second at most): a file
        deleted, or renamed away by a log rotation, is left alone and a new one started."""
        now = time.monotonic()
        if now - handle.checked < _NLINK_CHECK_SECONDS:
            return True
        handle.checked = now
        try:
            opened, named = os.fstat(handle.fd), os.stat(handle.path)
        except OSError:
            return False
        return (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)

    def _close(self, night: str) -> None:
        handle = self._open.pop(night, None)
        if handle is not None:
            with contextlib.suppress(OSError):  # a close of a file we opened
                os.close(handle.fd)

    def flush(self) -> None:
        """Make what was written durable (fsync); OSError if the disk says it is not."""
        with self.lock:
            for handle in list(self._open.values()):
                os.fsync(handle.fd)

    def close(self) -> None:
        with self.lock:
            for night in list(self._open):
                self._close(night)

    def forget_after_fork(self) -> None:
        """In a forked child: the parent's files stay the parent's; close our copies."""
        self.lock = threading.Lock()
        for handle in self._open.values():
            with contextlib.suppress(OSError):
                os.close(handle.fd)
        self._open = {}
        self.files = deque(maxlen=KEPT_NAMES)


@dataclass
class _Batch:
    """Lines waiting for one object; its name is fixed once an upload was tried, so a retry
    after a lost acknowledgement overwrites the same object instead of adding a copy."""

    night: str
    lines: list[bytes] = field(default_factory=list)
    size: int = 0
    path: str | None = None


class RemoteSink:
    """Buffers lines and uploads each batch as a new object (object stores cannot append)."""

    def __init__(self, fs: Any, root: str, suffix: str, host: str, gzip_level: int | None,
                 flush_bytes: int, max_buffer_bytes: int,
                 on_uploaded: Callable[[int], None], on_lost: Callable[[int, BaseException], None]) -> None:
        self.fs = fs
        self.root = root.rstrip("/")
        self.suffix = suffix
        self.host = host
        self.gzip_level = gzip_level
        self.flush_bytes = flush_bytes
        self.max_buffer_bytes = max_buffer_bytes
        self.on_uploaded = on_uploaded
        self.on_lost = on_lost
        self.lock = threading.Lock()
        self.upload_lock = threading.Lock()
        self.files: deque[str] = deque(maxlen=KEPT_NAMES)
        self.failing: BaseException | None = None
        self._current: dict[str, _Batch] = {}
        self._retry: list[_Batch] = []
        protocols = fs.protocol if isinstance(fs.protocol, tuple | list) else (fs.protocol,)
        self._needs_folders = not _OBJECT_STORES.intersection(protocols)
        self._made: set[str] = set()

    def encode(self, line: bytes) -> bytes:
        return line

    def write(self, night: str, data: bytes) -> bool:
        """Buffer one line; True when the buffer is full enough to upload now."""
        with self.lock:
            batch = self._current.get(night)
            if batch is None:
                batch = self._current[night] = _Batch(night)
            batch.lines.append(data)
            batch.size += len(data)
            return self._pending_bytes() >= self.flush_bytes

    def _pending_bytes(self) -> int:
        return sum(b.size for b in self._current.values()) + sum(b.size for b in self._retry)

    def pending(self) -> int:
        with self.lock:
            return sum(len(b.lines) for b in (*self._current.values(), *self._retry))

    def upload(self) -> BaseException | None:
        """Upload everything buffered so far; the first failure (its batches kept for a retry,
        within `max_buffer_bytes`), None when all went up."""
        with self.upload_lock:
            with self.lock:
                batches = [*self._retry, *self._current.values()]
                self._retry, self._current = [], {}
            failure: BaseException | None = None
            kept: list[_Batch] = []
            for batch in batches:
                if failure is not None:
                    kept.append(batch)
                    continue
                try:
                    self._put(batch)
                except Exception as exc:
                    failure = exc
                    kept.append(batch)
                else:
                    self.on_uploaded(len(batch.lines))
            with self.lock:
                self._retry = kept + self._retry
                self._shed(failure)
                self.failing = failure
            return failure

    def _shed(self, failure: BaseException | None) -> None:
        """Over `max_buffer_bytes` while the store is failing: drop the oldest batches, counted."""
        while self._retry and self._pending_bytes() > self.max_buffer_bytes:
            dropped = self._retry.pop(0)
            self.on_lost(len(dropped.lines), failure or OSError(errno.ENOBUFS, "capture buffer full"))

    def _put(self, batch: _Batch) -> None:
        folder = f"{self.root}/log_date={batch.night}"
        if batch.path is None:
            batch.path = f"{folder}/{self.host}-{os.getpid()}-{start_stamp()}{self.suffix}"
        data = b"".join(batch.lines)
        if self.gzip_level is not None:
            data = gzip.compress(data, compresslevel=self.gzip_level, mtime=0)
        if self._needs_folders and folder not in self._made:
            self.fs.makedirs(folder, exist_ok=True)
            self._made.add(folder)
        self.fs.pipe_file(batch.path, data)
        self.files.append(batch.path)

    def drop_all(self, failure: BaseException) -> None:
        """At close, after the last upload failed: what is still buffered is lost, counted."""
        with self.lock:
            batches = [*self._retry, *self._current.values()]
            self._retry, self._current = [], {}
        for batch in batches:
            self.on_lost(len(batch.lines), failure)

    def forget_after_fork(self) -> None:
        """In a forked child: the parent uploads its own buffer; start empty."""
        self.lock = threading.Lock()
        self.upload_lock = threading.Lock()
        self._current, self._retry = {}, []
        self.files = deque(maxlen=KEPT_NAMES)
        self.failing = None
