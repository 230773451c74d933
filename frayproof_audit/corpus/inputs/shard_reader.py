"""Reading one shard into raw records: JSONL lines (plain, gzip, zstd) and Parquet rows.

Readers never raise for a bad record: a line that is too long, a stream that cannot be
decompressed or a row group that cannot be decoded becomes a `Raw` with a `problem`, so the
record is reported, never lost. Memory stays bounded: a line longer than `--max-record-bytes`
is hashed and skipped in pieces, and Parquet is streamed in batches of at most a few
megabytes (one row, when a row is bigger), never a whole row group at once. A giant Parquet row
exists once in Python: its JSON text columns as bytes, hashed key by key and piece by piece.
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import io
import zlib
from collections.abc import Callable, Collection, Iterator
from typing import IO, Any, NamedTuple

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from frayproof_audit.corpus.inputs.expansion import InputFile, open_input
from frayproof_audit.corpus.inputs.shard_plan import Shard

_BUFFER = 1024 * 1024
_PARQUET_BATCH = 256
_PARQUET_BATCH_BYTES = 8 * 1024 * 1024
"""Uncompressed bytes a Parquet batch holds at most (unless one row alone is bigger)."""
_BOM = b"\xef\xbb\xbf"
_BLANK = b" \t\r\n"
"""JSON whitespace: a line of only these is blank. `\\x0b` or `\\x0c` is not, and is an input error."""
_BLANK_FIRST = frozenset({b" ", b"\t", b"\r", b"\n"})
"""A line can only be blank when it starts with one of these (the test before stripping it)."""


class Raw(NamedTuple):
    """One record as read. `value` is the line's bytes, its line ending included (JSONL), or
    the row's dict (Parquet; the `json_columns` asked for as UTF-8 bytes); None when the
    record could not be read whole, and then `problem` says why. `size` and `sha256` are of
    the record without its line ending."""

    row: int
    value: Any
    size: int
    sha256: str
    problem: str | None = None


def read_shard(
    shard: Shard, limit: int, columns: list[str] | None, json_columns: Collection[str] = ()
) -> Iterator[Raw]:
    """The shard's records. `json_columns` (Parquet): text columns the caller only parses as
    JSON; their cells come as UTF-8 `bytes` instead of `str` (one copy of a giant cell less,
    and no encoding back), while sizes and hashes stay those of the text."""
    if shard.file.kind == "parquet":
        return _parquet_rows(shard, columns, frozenset(json_columns))
    return _jsonl_lines(shard, limit)


def decompressed(kind: str, raw: IO[bytes]) -> io.BufferedIOBase:
    """The decompressed stream of a compressed input of `kind` over `raw` (closed by the caller)."""
    if kind == "jsonl.gz":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    stream = pa.CompressedInputStream(raw, "zstd")
    return io.BufferedReader(stream, buffer_size=_BUFFER)


def _open(shard: Shard, raw: IO[bytes]) -> io.BufferedIOBase:
    """The shard's byte stream over `raw` (closed by the caller): decompressed, or positioned."""
    if shard.file.kind != "jsonl":
        return decompressed(shard.file.kind, raw)
    handle = io.BufferedReader(raw, buffer_size=_BUFFER)  # type: ignore[type-var]
    handle.seek(shard.start)
    return handle


DECOMPRESS_ERRORS = (OSError, EOFError, zlib.error, pa.ArrowException)


def _skip(handle: io.BufferedIOBase, count: int) -> None:
    """Read and drop the first `count` bytes of a decompressed stream (part of a compressed
    input: the lines before it were audited by another run)."""
    while count > 0:
        chunk = handle.read(min(count, _BUFFER))
        if not chunk:
            return
        count -= len(chunk)


def _jsonl_lines(shard: Shard, limit: int) -> Iterator[Raw]:
    """Non-blank lines of the shard's byte range (or the whole compressed stream)."""
    line_no = shard.first_row - 1
    if shard.file.kind == "jsonl":
        remaining = shard.stop - shard.start
    else:
        remaining = -1 if shard.stream_stop is None else shard.stream_stop - shard.start
    opened = open_input(shard.file) if shard.file.remote else io.FileIO(shard.file.local, "rb")
    with opened as raw, _open(shard, raw) as handle:
        if shard.file.kind != "jsonl" and shard.start:
            try:
                _skip(handle, shard.start)
            except DECOMPRESS_ERRORS as exc:
                yield Raw(line_no + 1, None, 0, _EMPTY_SHA, f"cannot read the stream: {exc}")
                return
        while remaining != 0:
            try:
                line = handle.readline(limit + 2)
            except DECOMPRESS_ERRORS as exc:
                yield Raw(line_no + 1, None, 0, _EMPTY_SHA, f"cannot read the stream: {exc}")
                return
            if not line:
                return
            line_no += 1
            remaining -= len(line)
            if not line.endswith(b"\n") and len(line) == limit + 2:
                hashed = _Oversized()
                if line_no == 1 and line.startswith(_BOM):
                    line = line[3:]
                try:
                    while line:
                        hashed.feed(line)
                        if line.endswith(b"\n"):
                            break
                        line = handle.readline(_BUFFER)
                        remaining -= len(line)
                except DECOMPRESS_ERRORS as exc:
                    problem = f"cannot read the stream: {exc}"
                    yield Raw(line_no, None, hashed.size, hashed.hexdigest(), problem)
                    return
                hashed.end()
                yield Raw(line_no, None, hashed.size, hashed.hexdigest(), _too_big(hashed.size, limit))
                continue
            if line_no == 1 and line.startswith(_BOM):
                line = line[3:]
            if line[:1] in _BLANK_FIRST and not line.strip(_BLANK):
                continue
            size = len(line) - _terminator(line)
            # Hashed through a view and handed on with its line ending: no copy of the line.
            sha = hashlib.sha256(memoryview(line)[:size]).hexdigest()
            if size > limit:
                yield Raw(line_no, None, size, sha, _too_big(size, limit))
            else:
                yield Raw(line_no, line, size, sha)


def head_lines(file: InputFile, count: int, budget: int) -> list[bytes]:
    """The first `count` lines of a JSONL input (plain, gzip or zstd; local or remote), line
    endings included, as far as `budget` bytes reach: a line the budget cuts is left out, and
    so is everything after it. Blank lines are kept (they are lines)."""
    buffer = bytearray()
    newlines = 0  # counted chunk by chunk: counting the whole buffer each time was quadratic
    ended = False  # the stream's end was read (its last line may lack a newline)
    with open_input(file) as raw:
        handle: IO[bytes] | io.BufferedIOBase = raw if file.kind == "jsonl" else decompressed(file.kind, raw)
        try:
            # read(n), not readline(n): a remote file's readline takes no size (fsspec)
            while newlines < count and len(buffer) < budget:
                chunk = handle.read(min(_HEAD_CHUNK, budget - len(buffer)))
                if not chunk:
                    ended = True
                    break
                buffer += chunk
                newlines += chunk.count(b"\n")
        except DECOMPRESS_ERRORS:
            pass  # a damaged stream: the lines read so far are the evidence there is
        finally:
            if handle is not raw:
                handle.close()
    *whole, tail = bytes(buffer).split(b"\n")
    lines = [line + b"\n" for line in whole]
    if tail and ended:
        lines.append(tail)  # the last line, without its newline; cut by the budget: no evidence
    return lines[:count]


_HEAD_CHUNK = 64 * 1024


class _Oversized:
    """Size and SHA-256 of a line too long to hold, fed in pieces, line ending excluded.

    A `\\r` at the end of a piece is held back: it is content unless the next piece starts
    with the `\\n` that makes it part of a CRLF ending.
    """

    __slots__ = ("_digest", "_held", "size")

    def __init__(self) -> None:
        self._digest = hashlib.sha256()
        self._held = b""
        self.size = 0

    def feed(self, piece: bytes) -> None:
        piece = self._held + piece
        if piece.endswith(b"\n"):
            piece = piece[: len(piece) - _terminator(piece)]
            self._held = b""
        elif piece.endswith(b"\r"):
            piece, self._held = piece[:-1], b"\r"
        else:
            self._held = b""
        self._digest.update(piece)
        self.size += len(piece)

    def end(self) -> None:
        """The stream ended without a newline: a held `\\r` was content after all."""
        self._digest.update(self._held)
        self.size += len(self._held)
        self._held = b""

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


def _terminator(line: bytes) -> int:
    if line.endswith(b"\r\n"):
        return 2
    return 1 if line.endswith(b"\n") else 0


def _too_big(size: int, limit: int) -> str:
    return f"record is {size} bytes, over --max-record-bytes {limit}"


_EMPTY_SHA = hashlib.sha256(b"").hexdigest()


def _parquet_rows(shard: Shard, columns: list[str] | None, json_columns: frozenset[str]) -> Iterator[Raw]:
    """The shard's rows; a row group that cannot be decoded is one problem `Raw` per row it holds
    (the footer knows how many), and the next row group is read as usual. A file whose footer
    cannot be read is one problem `Raw` (the planner gave it `records = None`)."""
    row = shard.first_row
    try:
        handle = open_input(shard.file)  # never a URI; names that are not UTF-8 open too
    except OSError as exc:
        yield Raw(row, None, 0, _EMPTY_SHA, f"cannot read the file: {exc.strerror or exc}")
        return
    with handle:
        try:
            # Streamed page by page (no pre-buffering of whole column chunks), so a batch of a
            # few rows never holds its row group in memory.
            # Spark's INT96 times at microseconds: at nanoseconds Arrow wraps the years outside
            # 1677-2262 silently into wrong ones, and no log time needs finer than microseconds.
            parquet = pq.ParquetFile(handle, pre_buffer=False, buffer_size=_BUFFER,
                                     coerce_int96_timestamp_unit="us")
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
            metadata = parquet.metadata.row_group(group)
            end = row + metadata.num_rows
            try:
                for batch in parquet.iter_batches(
                    batch_size=batch_rows(metadata.total_byte_size, metadata.num_rows),
                    row_groups=[group], columns=wanted,
                ):
                    # Rows are taken out of Arrow first and handed on one at a time, so neither
                    # the batch nor a row already audited is kept while the next is audited.
                    batch, texts = _as_bytes(batch, json_columns)
                    rows = list(_batch_rows(batch))
                    del batch
                    if len(rows) < _PARQUET_BATCH:  # big rows: give Arrow's buffers back now
                        pa.default_memory_pool().release_unused()
                    rows.reverse()
                    while rows:
                        values, problem = rows.pop()
                        size, sha = _digest(values, texts)
                        if problem is None:
                            yield Raw(row, values, size, sha)
                        else:
                            yield Raw(row, None, size, sha, problem)
                        row += 1
            except (OSError, pa.ArrowException) as exc:
                problem = f"cannot read row group {group}: {_one_line(exc)}"
                for lost in range(row, end):
                    yield Raw(lost, None, 0, _EMPTY_SHA, problem)
            row = end


def batch_rows(group_bytes: int, group_rows: int) -> int:
    """Rows per Parquet batch: `_PARQUET_BATCH`, fewer when the row group's rows are big, so a
    batch holds about `_PARQUET_BATCH_BYTES` of uncompressed data (always at least one row)."""
    if group_rows <= 0 or group_bytes <= 0:
        return _PARQUET_BATCH
    per_row = group_bytes / group_rows
    return max(1, min(_PARQUET_BATCH, int(_PARQUET_BATCH_BYTES // per_row)))


_TEXT_TYPES = (pa.string(), pa.large_string())


def _as_bytes(batch: pa.RecordBatch, wanted: frozenset[str]) -> tuple[pa.RecordBatch, frozenset[str]]:
    """`batch` with its `wanted` text columns seen as binary (no copy: the same buffers), and
    the names of those columns. A column whose UTF-8 is broken stays text, so converting it
    fails exactly as before and the row reports it."""
    if not wanted:
        return batch, frozenset()
    names = batch.schema.names
    arrays = list(batch.columns)
    texts = []
    for index, name in enumerate(names):
        array = arrays[index]
        if name not in wanted or array.type not in _TEXT_TYPES or names.count(name) != 1:
            continue
        try:
            array.validate(full=True)
        except pa.ArrowException:
            continue
        target = pa.binary() if array.type == pa.string() else pa.large_binary()
        arrays[index] = array.view(target)
        texts.append(name)
    if not texts:
        return batch, frozenset()
    return pa.RecordBatch.from_arrays(arrays, names=names), frozenset(texts)


_PIECE = 1024 * 1024
"""Text above this size is written into the hash in pieces of this many bytes or characters."""


def _digest(values: dict[str, Any], texts: frozenset[str] = frozenset()) -> tuple[int, str]:
    """Size and SHA-256 of a row as sorted-key JSON, `texts` (columns held as UTF-8 bytes)
    written as the text they are. Small rows are written whole; a row with a big text is
    written key by key and its big texts piece by piece, the same bytes, never all at once."""
    big = [key for key, value in values.items()
           if type(value) in (str, bytes) and len(value) > _PIECE and (type(value) is str or key in texts)]
    if not big:
        plain = {key: (value.decode() if key in texts and type(value) is bytes else value)
                 for key, value in values.items()} if texts else values
        encoded = orjson.dumps(plain, option=_DIGEST_OPTIONS, default=_digest_default)
        return len(encoded), hashlib.sha256(encoded).hexdigest()
    digest = hashlib.sha256()
    size = 0

    def feed(piece: bytes) -> None:
        nonlocal size
        digest.update(piece)
        size += len(piece)

    feed(b"{")
    for number, key in enumerate(sorted(values)):
        feed(b"," + orjson.dumps(key) + b":" if number else orjson.dumps(key) + b":")
        value = values[key]
        if key in big:
            feed(b'"')
            for text in _text_pieces(value):
                feed(orjson.dumps(text)[1:-1])
            feed(b'"')
        elif key in texts and type(value) is bytes:
            feed(orjson.dumps(value.decode()))
        else:
            feed(orjson.dumps(value, option=_DIGEST_OPTIONS, default=_digest_default))
    feed(b"}")
    return size, digest.hexdigest()


def _text_pieces(value: str | bytes) -> Iterator[str]:
    """A long text in pieces of about `_PIECE` (bytes: decoded piece by piece, a character
    split between two pieces joined by the decoder)."""
    if isinstance(value, str):
        for start in range(0, len(value), _PIECE):
            yield value[start : start + _PIECE]
        return
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(value)
    for start in range(0, len(view), _PIECE):
        yield decoder.decode(view[start : start + _PIECE])
    yield decoder.decode(b"", final=True)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


_CONVERSION_ERRORS = (ValueError, OverflowError, pa.ArrowException)


def _batch_rows(batch: pa.RecordBatch) -> Iterator[tuple[dict[str, Any], str | None]]:
    """The rows of a batch as Python values, each with the problem that kept it from being read.

    Nanosecond timestamps are first truncated to their microsecond (`at_microseconds`), the
    precision of Python's `datetime`. `to_pylist` raises for a whole batch when one cell still has
    no Python value (a timestamp or date outside the years 1-9999). Only then is the batch
    converted again cell by cell, so one odd value costs its row, never its neighbours. The bad
    cell is kept as Arrow's text for it, so the row still has a stable hash.
    """
    batch = at_microseconds(batch)
    try:
        rows: list[dict[str, Any]] = batch.to_pylist()
    except _CONVERSION_ERRORS:
        pass
    else:
        for values in rows:
            yield values, None
        return
    names = batch.schema.names
    for index in range(batch.num_rows):
        values = {}
        problem = None
        for name, column in zip(names, batch.columns, strict=True):
            cell = column.slice(index, 1)
            try:
                values[name] = _cell_value(cell)
            except _CONVERSION_ERRORS as exc:
                values[name] = text = _arrow_text(cell)
                if problem is None:
                    problem = _unreadable(name, cell, text[:60], exc)
        yield values, problem


def _cell_value(cell: pa.Array) -> Any:
    """One cell's Python value. An aware timestamp is an instant in UTC whatever its zone says
    (Arrow stores UTC; the zone only tells how to show it), so when its local time cannot be
    shown (a zone name Python does not know, a local year past 9999) it is read in UTC."""
    try:
        return cell.to_pylist()[0]
    except _CONVERSION_ERRORS:
        in_utc = _retyped(cell.type, _utc)
        if in_utc == cell.type:
            raise
        return cell.cast(in_utc).to_pylist()[0]


_SINCE_EPOCH = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}


def _unreadable(name: str, cell: pa.Array, text: str, exc: Exception) -> str:
    """Why a cell has no Python value. A time is shown as the number it holds (Arrow's text for
    a time that far out is garbled, and a local time can hide the UTC year that is out)."""
    kind = cell.type
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
        try:
            number = cell.cast(pa.int32() if kind == pa.date32() else pa.int64())[0].as_py()
        except _CONVERSION_ERRORS:  # pragma: no cover - every temporal type casts to its integer
            number = text
        since = ("days since 1970-01-01" if kind == pa.date32() else
                 f"{_SINCE_EPOCH[getattr(kind, 'unit', 'ms')]} since 1970-01-01 UTC")
        return f"column {name!r} holds {number} {since}, outside the years 1-9999 Python can read"
    return f"column {name!r} holds {text}, which Python cannot read ({_one_line(exc)})"


def at_microseconds(batch: pa.RecordBatch) -> pa.RecordBatch:
    """`batch` with every nanosecond timestamp (a column, or inside its structs and lists) truncated
    to its microsecond, toward the earlier one as for any time's extra digits (also before 1970,
    where Arrow's own cast would round toward the epoch). Any other column is left as it is; a
    batch without nanoseconds is returned as it is, for the cost of a look at its types."""
    if not any(map(_has_nanoseconds, batch.schema.types)):
        return batch
    arrays = [_floor_nanoseconds(column) for column in batch.columns]
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def _has_nanoseconds(kind: pa.DataType) -> bool:
    if pa.types.is_timestamp(kind):
        return bool(kind.unit == "ns")
    if pa.types.is_struct(kind):
        return any(_has_nanoseconds(field.type) for field in kind)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _has_nanoseconds(kind.value_type)
    return False


def _micro(kind: pa.TimestampType) -> pa.DataType:
    return pa.timestamp("us", tz=kind.tz) if kind.unit == "ns" else kind


def _utc(kind: pa.TimestampType) -> pa.DataType:
    return kind if kind.tz is None else pa.timestamp(kind.unit, tz="UTC")


def _retyped(kind: pa.DataType, change: Callable[[pa.TimestampType], pa.DataType]) -> pa.DataType:
    """`kind` with `change` made to each timestamp type in it, at any depth of structs and lists
    (the containers a Parquet column maps to JSON; a map or union is left as it is)."""
    if pa.types.is_timestamp(kind):
        return change(kind)
    if pa.types.is_struct(kind):
        return pa.struct([field.with_type(_retyped(field.type, change)) for field in kind])
    if pa.types.is_list(kind):
        return pa.list_(kind.value_field.with_type(_retyped(kind.value_type, change)))
    if pa.types.is_large_list(kind):
        return pa.large_list(kind.value_field.with_type(_retyped(kind.value_type, change)))
    return kind


def _floor_nanoseconds(array: pa.Array) -> pa.Array:
    kind = array.type
    if not _has_nanoseconds(kind):
        return array
    import pyarrow.compute as pc  # only for nanosecond columns; its import is ~40 ms

    mask = array.is_null() if array.null_count else None
    if pa.types.is_timestamp(kind):
        nanos = array.cast(pa.int64())
        micros = pc.divide(nanos, 1000)  # toward zero: one less where that rounded up
        micros = pc.subtract(micros, pc.less(nanos, pc.multiply(micros, 1000)).cast(pa.int64()))
        return micros.cast(pa.timestamp("us", tz=kind.tz))
    if pa.types.is_struct(kind):
        children = [_floor_nanoseconds(child) for child in array.flatten()]
        fields = [field.with_type(child.type) for field, child in zip(kind, children, strict=True)]
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    # A slice's offsets start past 0 into all of the values; rebased (a new array) they can go
    # with a null mask, which Arrow refuses for offsets that are a slice themselves.
    offsets = array.offsets
    first, last = offsets[0].as_py(), offsets[-1].as_py()
    values = _floor_nanoseconds(array.values.slice(first, last - first))
    lists = pa.ListArray if pa.types.is_list(kind) else pa.LargeListArray
    return lists.from_arrays(pc.subtract(offsets, first), values, type=_retyped(kind, _micro), mask=mask)


def _arrow_text(cell: pa.Array) -> str:
    try:
        text = cell.cast(pa.string())[0].as_py()
    except _CONVERSION_ERRORS:
        text = None
    return text if isinstance(text, str) else cell.to_string()


_DIGEST_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_UTC_Z


def _digest_default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return value.hex()
    return str(value)
