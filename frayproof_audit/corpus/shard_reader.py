"""Reading one shard into raw records: JSONL lines (plain, gzip, zstd) and Parquet rows.

Readers never raise for a bad record: a line that is too long, a stream that cannot be
decompressed or a row group that cannot be decoded becomes a `Raw` with a `problem`, so the
record is reported, never lost. Memory stays bounded: a line longer than `--max-record-bytes`
is hashed and skipped in pieces, and Parquet is read in small batches of one row group at a time.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import zlib
from collections.abc import Iterator
from typing import Any, NamedTuple

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from frayproof_audit.corpus.shards import Shard

_BUFFER = 1024 * 1024
_PARQUET_BATCH = 256
_BOM = b"\xef\xbb\xbf"


class Raw(NamedTuple):
    """One record as read. `value` is the line's bytes (JSONL) or the row's dict (Parquet);
    None when the record could not be read whole, and then `problem` says why."""

    row: int
    value: Any
    size: int
    sha256: str
    problem: str | None = None


def read_shard(shard: Shard, limit: int, columns: list[str] | None) -> Iterator[Raw]:
    if shard.source.kind == "parquet":
        return _parquet_rows(shard, columns)
    return _jsonl_lines(shard, limit)


def _open(shard: Shard) -> io.BufferedIOBase:
    path, kind = shard.source.path, shard.source.kind
    if kind == "jsonl.gz":
        return gzip.GzipFile(path, "rb")
    if kind == "jsonl.zst":
        stream = pa.input_stream(path, compression="zstd")
        return io.BufferedReader(stream, buffer_size=_BUFFER)
    handle = io.BufferedReader(io.FileIO(path, "rb"), buffer_size=_BUFFER)
    handle.seek(shard.start)
    return handle


_DECOMPRESS_ERRORS = (OSError, EOFError, zlib.error, pa.ArrowException)


def _jsonl_lines(shard: Shard, limit: int) -> Iterator[Raw]:
    """Non-blank lines of the shard's byte range (or the whole compressed stream)."""
    line_no = shard.first_row - 1
    remaining = shard.stop - shard.start if shard.source.kind == "jsonl" else -1
    with _open(shard) as handle:
        while remaining != 0:
            try:
                line = handle.readline(limit + 2)
            except _DECOMPRESS_ERRORS as exc:
                yield Raw(line_no + 1, None, 0, _EMPTY_SHA, f"cannot read the stream: {exc}")
                return
            if not line:
                return
            line_no += 1
            remaining -= len(line)
            if not line.endswith(b"\n") and len(line) == limit + 2:
                digest = hashlib.sha256(line)
                size = len(line)
                try:
                    while not line.endswith(b"\n"):
                        line = handle.readline(_BUFFER)
                        if not line:
                            break
                        remaining -= len(line)
                        size += len(line)
                        digest.update(line)
                except _DECOMPRESS_ERRORS as exc:
                    yield Raw(line_no, None, size, digest.hexdigest(), f"cannot read the stream: {exc}")
                    return
                size -= _terminator(line)
                yield Raw(line_no, None, size, digest.hexdigest(), _too_big(size, limit))
                continue
            data = line[: len(line) - _terminator(line)]
            if line_no == 1 and data.startswith(_BOM):
                data = data[3:]
            if not data.strip():
                continue
            sha = hashlib.sha256(data).hexdigest()
            if len(data) > limit:
                yield Raw(line_no, None, len(data), sha, _too_big(len(data), limit))
            else:
                yield Raw(line_no, data, len(data), sha)


def _terminator(line: bytes) -> int:
    if line.endswith(b"\r\n"):
        return 2
    return 1 if line.endswith(b"\n") else 0


def _too_big(size: int, limit: int) -> str:
    return f"record is {size} bytes, over --max-record-bytes {limit}"


_EMPTY_SHA = hashlib.sha256(b"").hexdigest()


def _parquet_rows(shard: Shard, columns: list[str] | None) -> Iterator[Raw]:
    """The shard's rows; a row group that cannot be decoded is one problem `Raw` per row it holds
    (the footer knows how many), and the next row group is read as usual. A file whose footer
    cannot be read is one problem `Raw` (the planner gave it `records = None`)."""
    row = shard.first_row
    try:
        handle = open(shard.source.path, "rb")  # noqa: SIM115 - closed below; never a URI
    except OSError as exc:
        yield Raw(row, None, 0, _EMPTY_SHA, f"cannot read the file: {exc.strerror or exc}")
        return
    with handle:
        try:
            parquet = pq.ParquetFile(handle)
        except (OSError, pa.ArrowException) as exc:
            yield Raw(row, None, 0, _EMPTY_SHA, f"cannot read the Parquet file: {_one_line(exc)}")
            return
        wanted = None
        if columns is not None:
            names = set(parquet.schema_arrow.names)
            wanted = [name for name in columns if name in names]
        groups = range(shard.start, shard.stop) if shard.records is not None else (
            range(parquet.metadata.num_row_groups)  # unreadable when planned, readable now
        )
        for group in groups:
            end = row + parquet.metadata.row_group(group).num_rows
            try:
                for batch in parquet.iter_batches(
                    batch_size=_PARQUET_BATCH, row_groups=[group], columns=wanted
                ):
                    for values in batch.to_pylist():
                        encoded = orjson.dumps(values, option=_DIGEST_OPTIONS, default=_digest_default)
                        yield Raw(row, values, len(encoded), hashlib.sha256(encoded).hexdigest())
                        row += 1
            except (OSError, pa.ArrowException) as exc:
                problem = f"cannot read row group {group}: {_one_line(exc)}"
                for lost in range(row, end):
                    yield Raw(lost, None, 0, _EMPTY_SHA, problem)
            row = end


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


_DIGEST_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_UTC_Z


def _digest_default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return value.hex()
    return str(value)
