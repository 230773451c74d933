"""`PairWriter`: log a compaction pair in one line, in exactly the layout `audit` reads.

It never raises into the agent: a pair that cannot be written (a full disk, a read-only folder,
a dead bucket, a value that is not JSON, a failing `redact`) is counted in `errors`, the first
failure is logged at ERROR on the `frayproof_audit.capture` logger (then at most once a minute,
and once more when writing works again), and `record` returns None. `strict=True` raises
`CaptureError` instead, for tests and for agents that would rather stop than run unlogged.
"""

from __future__ import annotations

import atexit
import concurrent.futures.thread  # noqa: F401 - registers its exit hook before ours (see the end)
import contextlib
import itertools
import logging
import os
import re
import secrets
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal

from frayproof_audit.capture.records import (
    RESERVED,
    RecordError,
    dumps,
    identifier,
    plain,
    sampled_in,
    timestamp,
    wire_of,
)
from frayproof_audit.capture.sinks import LocalSink, RemoteSink, host_name
from frayproof_audit.formats import FORMATS

LOGGER = logging.getLogger("frayproof_audit.capture")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_REPORT_EVERY = 60.0
_MIB = 1024 * 1024
_LIVE: weakref.WeakSet[PairWriter] = weakref.WeakSet()


class CaptureError(Exception):
    """Raised by a `strict=True` writer when a pair could not be written; `__cause__` is why."""


@dataclass(frozen=True)
class WriterStats:
    """What happened to the pairs handed to `record`, counted since the writer started (in a
    forked child: since the fork). `recorded` = `written` + `pending` + `sampled_out` +
    `redacted_out` + `errors`."""

    recorded: int
    written: int
    """Lines in the target: appended (local) or uploaded (fsspec)."""
    pending: int
    """Buffered for an upload not yet done (fsspec targets only)."""
    sampled_out: int
    redacted_out: int
    """Dropped because `redact` returned None."""
    errors: int
    """Pairs that will never be written: a write failure, a value that is not JSON, a failing
    `redact`, or buffered lines lost while a store stayed unreachable."""
    last_error: str | None
    files: tuple[str, ...]
    """The files (or objects) this writer created, oldest first (the last 4,096)."""


class PairWriter:
    """Append before/after pairs as JSONL records under `ROOT/log_date=YYYY-MM-DD/`.

    `root` is a local folder (or `file://` URI) or any fsspec URI (`s3://bucket/compactions`,
    `gs://…`, `memory://…`). Local files are appended line by line as `record` is called;
    object stores cannot append, so lines are buffered and each batch becomes a new object,
    uploaded in the background every `flush_interval` seconds, when `flush_bytes` are waiting,
    and on `flush()` / `close()` / interpreter exit.

    * `compression="gzip"` writes `.jsonl.gz` (locally one gzip member per record, so a file
      is always a valid stream up to its last whole record).
    * `max_file_bytes`: a file is closed and a new one started once it is this large
      (default 64 MiB plain, 16 MiB gzip: a compressed file is one shard for `audit`).
    * `sample`: the share of sessions kept (by a hash of `session_id`, the same in every
      process, so a session is kept or dropped whole; pairs without a session are sampled one
      by one).
    * `redact(record) -> record | None`: called with the whole record as plain JSON values (a
      fresh copy, free to edit) before anything is written; None drops the pair. If it raises,
      the pair is dropped and counted as an error: nothing unredacted is ever written.
    * `strict`: raise `CaptureError` instead of counting.
    * `host`: the host part of file names (default: this machine's name).
    * `storage_options`: passed to fsspec for a URI root.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        compression: Literal["gzip"] | None = None,
        max_file_bytes: int | None = None,
        sample: float = 1.0,
        redact: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None,
        strict: bool = False,
        host: str | None = None,
        storage_options: Mapping[str, Any] | None = None,
        flush_interval: float = 30.0,
        flush_bytes: int = 8 * _MIB,
        max_buffer_bytes: int = 64 * _MIB,
    ) -> None:
        if compression not in (None, "gzip"):
            raise ValueError(f"compression must be None or 'gzip', got {compression!r}")
        if not 0.0 <= sample <= 1.0:
            raise ValueError(f"sample must be between 0 and 1, got {sample!r}")
        if max_file_bytes is not None and max_file_bytes <= 0:
            raise ValueError("max_file_bytes must be positive")
        if flush_interval <= 0 or flush_bytes <= 0 or max_buffer_bytes <= 0:
            raise ValueError("flush_interval, flush_bytes and max_buffer_bytes must be positive")
        if redact is not None and not callable(redact):
            raise TypeError("redact must be a callable (record -> record or None)")
        self.root = os.fspath(root)
        self.sample = float(sample)
        self.redact = redact
        self.strict = strict
        self.flush_interval = float(flush_interval)
        suffix = ".jsonl.gz" if compression == "gzip" else ".jsonl"
        level = 6 if compression == "gzip" else None
        limit = max_file_bytes or (16 * _MIB if compression == "gzip" else 64 * _MIB)
        local = _local_root(self.root)
        self._sink: LocalSink | RemoteSink
        if local is not None:  # absolute now: a later chdir must not move the log
            self._sink = LocalSink(os.path.abspath(local), suffix, host_name(host), limit, level)
        else:
            import fsspec

            fs, path = fsspec.core.url_to_fs(self.root, **dict(storage_options or {}))
            self._sink = RemoteSink(fs, path, suffix, host_name(host), level, flush_bytes,
                                    max_buffer_bytes, self._uploaded, self._lost)
        self._reset_process_state()
        self._closed = False
        _LIVE.add(self)
        if isinstance(self._sink, LocalSink):  # a writer dropped without close() frees its files
            weakref.finalize(self, self._sink.close)

    def _reset_process_state(self) -> None:
        """Everything that belongs to one process (ids, counters, locks, the uploader)."""
        self._prefix = secrets.token_hex(6)
        self._sequence = itertools.count(1)
        self._stats_lock = threading.Lock()
        self._recorded = self._written = self._sampled_out = self._redacted_out = self._errors = 0
        self._last_error: BaseException | None = None
        self._failing = False
        self._reported_at = -_REPORT_EVERY
        self._wake = threading.Condition()
        self._urgent = False
        self._stopping = False
        self._uploader: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"PairWriter({self.root!r})"

    # --- recording ------------------------------------------------------------------------

    def record(
        self,
        before: Any,
        after: Any,
        *,
        compactor: str,
        session_id: str | int | None = None,
        pair_id: str | int | None = None,
        logged_at: Any = None,
        format: str | None = None,
        tools: list[Any] | None = None,
        **extra: Any,
    ) -> str | int | None:
        """Write one pair; its `pair_id` (given, or a new unique one), or None when it was
        sampled out, redacted out or could not be written (`errors`).

        `before` / `after`: message lists in any supported wire format (dicts, pydantic items
        of the OpenAI SDKs), LangChain messages (converted by LangChain's
        `convert_to_openai_messages`; the record then says `format: openai`), a neutral
        `Snapshot`, or a path to a JSON file. Both are serialized before `record` returns.
        `logged_at`: a datetime, RFC 3339 text or epoch number (default: now); it also picks
        the night folder. Extra keyword arguments are written as extra record fields."""
        with self._stats_lock:
            self._recorded += 1
        try:
            return self._record(before, after, compactor, session_id, pair_id, logged_at, format,
                                tools, extra)
        except Exception as exc:
            self._lost(1, exc)
            if self.strict:
                raise CaptureError(f"pair not written to {self.root}: {exc}") from exc
            return None

    def _record(self, before: Any, after: Any, compactor: Any, session_id: Any, pair_id: Any,
                logged_at: Any, fmt: Any, tools: Any, extra: dict[str, Any]) -> str | int | None:
        if self._closed:
            raise CaptureError("the writer is closed")
        if self.strict and isinstance(self._sink, RemoteSink) and self._sink.failing is not None:
            raise CaptureError(f"the last upload failed: {self._sink.failing}")
        session = identifier(session_id, "session_id")
        pair = identifier(pair_id, "pair_id")
        if pair is None:
            pair = f"{self._prefix}-{next(self._sequence)}"
        if self.sample < 1.0 and not sampled_in(str(pair if session is None else session), self.sample):
            with self._stats_lock:
                self._sampled_out += 1
            return None
        if type(compactor) is not str:
            raise RecordError(f"compactor must be a string, got {type(compactor).__name__}")
        if fmt is not None and fmt not in FORMATS:
            raise RecordError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
        if tools is not None and not isinstance(tools, list):
            raise RecordError(f"tools must be a list of tool definitions, got {type(tools).__name__}")
        if extra and not RESERVED.isdisjoint(extra):  # pragma: no cover - keyword parameters win
            clash = ", ".join(sorted(RESERVED & set(extra)))
            raise RecordError(f"extra fields may not be named {clash}")
        when, night = timestamp(logged_at, _utc_now)
        wire_before, format_before = wire_of(before)
        wire_after, format_after = wire_of(after)
        record: dict[str, Any] = {"pair_id": pair}
        if session is not None:
            record["session_id"] = session
        record["compactor"] = compactor
        record["logged_at"] = when
        fmt = fmt or format_before or format_after
        if fmt is not None:
            record["format"] = fmt
        if tools is not None:
            record["tools"] = tools
        record.update(extra)
        if self.redact is None:
            # One serialization of the whole line, now: the snapshots are captured as they are
            # when `record` is called.
            record["before"], record["after"] = wire_before, wire_after
        else:
            record = plain(record)
            record["before"], record["after"] = plain(wire_before), plain(wire_after)
            redacted = self.redact(record)
            if redacted is None:
                with self._stats_lock:
                    self._redacted_out += 1
                return None
            if not isinstance(redacted, dict):
                raise RecordError(f"redact must return a dict or None, got {type(redacted).__name__}")
            record = redacted
        line = dumps(record, newline=True)
        sink = self._sink
        if isinstance(sink, LocalSink):
            sink.write(night, sink.encode(line))
            self._uploaded(1)
        elif sink.write(night, line):
            self._start_uploader(urgent=True)
        else:
            self._start_uploader(urgent=False)
        return pair

    # --- outcomes -------------------------------------------------------------------------

    def _uploaded(self, count: int) -> None:
        with self._stats_lock:
            self._written += count
            recovered = self._failing
            self._failing = False
        if recovered:
            LOGGER.warning("capture: writing to %s again (%d pair(s) lost so far)", self.root, self._errors)

    def _lost(self, count: int, error: BaseException) -> None:
        now = time.monotonic()
        with self._stats_lock:
            self._errors += count
            self._last_error = error
            self._failing = True
            report = now - self._reported_at >= _REPORT_EVERY
            if report:
                self._reported_at = now
            total = self._errors
        if report:
            LOGGER.error("capture: %d pair(s) not written to %s (%d so far): %s", count, self.root,
                         total, _describe(error))

    def _upload_failed(self, error: BaseException) -> None:
        now = time.monotonic()
        with self._stats_lock:
            self._last_error = error
            self._failing = True
            report = now - self._reported_at >= _REPORT_EVERY
            if report:
                self._reported_at = now
        if report:
            LOGGER.error("capture: upload to %s failed, will retry (%d pair(s) waiting): %s",
                         self.root, self._sink_pending(), _describe(error))

    def _sink_pending(self) -> int:
        return self._sink.pending() if isinstance(self._sink, RemoteSink) else 0

    @property
    def errors(self) -> int:
        """Pairs that could not be written (see `WriterStats.errors`)."""
        with self._stats_lock:
            return self._errors

    @property
    def last_error(self) -> BaseException | None:
        """The most recent failure, if any."""
        with self._stats_lock:
            return self._last_error

    def stats(self) -> WriterStats:
        """A snapshot of the counters."""
        pending = self._sink_pending()
        with self._stats_lock:
            return WriterStats(
                recorded=self._recorded, written=self._written, pending=pending,
                sampled_out=self._sampled_out, redacted_out=self._redacted_out,
                errors=self._errors,
                last_error=None if self._last_error is None else _describe(self._last_error),
                files=tuple(self._sink.files),
            )

    # --- the uploader (fsspec targets) ----------------------------------------------------

    def _start_uploader(self, urgent: bool) -> None:
        with self._wake:
            if self._uploader is None or not self._uploader.is_alive():
                self._stopping = False
                self._uploader = threading.Thread(target=self._upload_loop, name="frayproof-capture",
                                                  daemon=True)
                self._uploader.start()
            if urgent:
                self._urgent = True
                self._wake.notify()

    def _upload_loop(self) -> None:
        sink = self._sink
        assert isinstance(sink, RemoteSink)
        while True:
            with self._wake:
                if not (self._urgent or self._stopping):
                    self._wake.wait(self.flush_interval)
                self._urgent = False
                if self._stopping:
                    return
            failure = sink.upload()
            if failure is not None:
                self._upload_failed(failure)

    def _stop_uploader(self) -> None:
        with self._wake:
            thread, self._uploader = self._uploader, None
            self._stopping = True
            self._wake.notify()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=60)

    # --- flush and close ------------------------------------------------------------------

    def flush(self) -> bool:
        """Make everything recorded so far durable: fsync local files, upload buffered lines.
        True when that worked; False (or `CaptureError` when strict) when it did not."""
        sink = self._sink
        try:
            if isinstance(sink, LocalSink):
                sink.flush()
                return True
            failure = sink.upload()
        except Exception as exc:
            self._upload_failed(exc)
            if self.strict:
                raise CaptureError(f"flush to {self.root} failed: {exc}") from exc
            return False
        if failure is None:
            return True
        self._upload_failed(failure)
        if self.strict:
            raise CaptureError(f"upload to {self.root} failed: {failure}") from failure
        return False

    def close(self) -> None:
        """Release files (local) or upload what is buffered and stop the uploader (fsspec);
        buffered lines that still cannot be uploaded are counted in `errors`. Idempotent;
        `record` after `close` is an error. Local lines are in their files as soon as `record`
        returns: `close` does not fsync (`flush` does)."""
        if self._closed:
            return
        self._closed = True
        _LIVE.discard(self)
        sink = self._sink
        if isinstance(sink, LocalSink):
            sink.close()  # every line is already in the file; `flush()` is what fsyncs
            return
        self._stop_uploader()
        failure = sink.upload()
        if failure is not None:
            sink.drop_all(failure)
            if self.strict:
                raise CaptureError(f"upload to {self.root} failed at close: {failure}") from failure

    def __enter__(self) -> PairWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def _after_fork_in_child(self) -> None:
        self._sink.forget_after_fork()
        self._reset_process_state()


def _local_root(root: str) -> str | None:
    """The local folder a root names (a plain path, or a `file://` URI); None for other URIs."""
    if _URI.match(root) is None:
        return root
    if root.split("://", 1)[0].lower() != "file":
        return None
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(root)
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"'{root}': a file:// URI must name a local path (file:///path)")
    return unquote(parts.path) or "/"


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _describe(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _after_fork_in_child() -> None:
    for writer in list(_LIVE):
        writer._after_fork_in_child()


def _close_all_at_exit() -> None:
    for writer in list(_LIVE):
        with contextlib.suppress(Exception):  # a strict writer at exit: nothing to raise into
            writer.close()


os.register_at_fork(after_in_child=_after_fork_in_child)
# Buffered lines are uploaded when the interpreter exits, before threads are joined and before
# `concurrent.futures` stops accepting work (fsspec's async filesystems need it to upload):
# threading's exit hooks run in reverse order of registration, and the import above put
# concurrent.futures' hook first. `atexit` is the fallback where that hook does not exist.
_register_early = getattr(threading, "_register_atexit", None)
if _register_early is not None:
    _register_early(_close_all_at_exit)
atexit.register(_close_all_at_exit)
