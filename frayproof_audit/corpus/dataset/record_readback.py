"""A pair's record read back from the input it was audited from, and proved to be that record.

The dataset keeps where each record came from (`pairs.source`, `source_row`) and its SHA-256
(`record_sha256`), never the snapshots. Whoever shows a pair's messages reads them again here:
a JSONL line (plain, gzip, zstd; a local file or an object store URI) or a Parquet row, through
the same shard reader `audit` used, so the hash is computed exactly as it was then (line ending,
BOM and blank lines; a Parquet row as the sorted-key JSON of the columns the run's field map
reads). A record whose hash differs is never handed over: the input changed since the audit,
and showing another record's messages under this pair's findings would be a lie. One pass per
input file serves every record wanted from it (a report of thousands of pairs reads each file
once, and stops at the last line it needs).
"""

from __future__ import annotations

import mmap
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from frayproof_audit.corpus.inputs import location
from frayproof_audit.corpus.inputs.expansion import InputFile, display_path, kind_of, open_input
from frayproof_audit.corpus.inputs.field_map import FieldMap
from frayproof_audit.corpus.inputs.newlines import FIND_FIRST, count_newlines
from frayproof_audit.corpus.inputs.record_fields import FieldReader, RecordProblem, parse_json_record
from frayproof_audit.corpus.inputs.shard_plan import Shard
from frayproof_audit.corpus.inputs.shard_reader import DECOMPRESS_ERRORS, read_shard

State = Literal["found", "gone", "changed", "unreadable"]
"""`found`: the record, its hash verified; `gone`: the input or the row is no longer there;
`changed`: the row is there but holds another record (its SHA-256 differs); `unreadable`: it is
there but cannot be read whole (a stream that no longer decompresses, a record over the size
limit, not valid JSON any more)."""

DEFAULT_LIMIT = 1024 * 1024 * 1024
"""Bytes a record may have when read back (the audit's own `--max-record-bytes` caps lower)."""
_ESCAPED_BYTE = re.compile(r"\\x([0-9a-f]{2})")


@dataclass(frozen=True, slots=True)
class RecordRef:
    """Where a record was read from, and its SHA-256 as the audit computed it."""

    source: str
    source_row: int
    record_sha256: str


@dataclass(frozen=True, slots=True)
class ReadBack:
    """A record read back: `record` (the parsed JSONL object, or the Parquet row with its JSON
    text columns as UTF-8 bytes) only when `state` is `found`; `reason` says what happened
    otherwise, naming the file and the line or row."""

    ref: RecordRef
    state: State
    record: dict[str, Any] | None = None
    reason: str = ""
    parquet: bool = False
    hive: tuple[tuple[str, str], ...] = ()

    @property
    def place(self) -> str:
        return f"{self.ref.source} {'row' if self.parquet else 'line'} {self.ref.source_row}"


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How the run read its inputs: its field map (a Parquet row's hash covers the columns it
    reads), the largest record it took, and where relative `source` paths are found."""

    fields: FieldMap = field(default_factory=FieldMap)
    limit: int = DEFAULT_LIMIT
    root: str | None = None
    """The folder relative sources are resolved in (None: the current folder)."""


def read_back(refs: Iterable[RecordRef], options: ReadOptions = ReadOptions()) -> dict[RecordRef, ReadBack]:
    """Every record of `refs`, read back and verified, by its reference. Never raises for an
    input that is gone or changed: that is a `ReadBack` state."""
    return {result.ref: result for result in iter_read_back(refs, options)}


def iter_read_back(refs: Iterable[RecordRef], options: ReadOptions = ReadOptions()) -> Iterator[ReadBack]:
    """`read_back` as a stream, in input order (file by file, line by line): a caller that
    handles each record as it comes holds one record at a time, whatever the number asked for."""
    by_source: dict[str, set[RecordRef]] = {}
    for ref in refs:
        by_source.setdefault(ref.source, set()).add(ref)
    for source, wanted in sorted(by_source.items()):
        yield from _read_source(source, wanted, options)


def snapshots(read: ReadBack, options: ReadOptions, containers: tuple[type, ...]) -> tuple[Any, Any]:
    """A found record's `before` and `after` (plain JSON values, detached), where the run's field
    map says they are. Raises `RecordProblem` when the record no longer holds them."""
    if read.record is None:
        raise RecordProblem(read.reason or f"{read.place}: the record was not read")
    reader = FieldReader(options.fields, read.hive, read.parquet, "openai")
    return (reader.snapshot(read.record, "before", containers),
            reader.snapshot(read.record, "after", containers))


def _input_file(source: str, options: ReadOptions) -> InputFile | str:
    """The input to open for `source`, or why there is none."""
    kind = kind_of(source)
    if kind is None:
        return f"'{source}' is no input kind this version reads"
    if location.is_uri(source) and location.local_path(source) is None:
        try:
            fs, path = location.filesystem(source)
            info = fs.info(path)
        except FileNotFoundError:
            return f"'{source}' no longer exists"
        except (OSError, ValueError, location.LocationError) as exc:
            return f"cannot read '{source}': {exc}"
        size = info.get("size")
        return InputFile(source, kind, int(size) if isinstance(size, int) else 0, remote=True)
    local = location.local_path(source) or source
    if options.root is not None and not os.path.isabs(local):
        local = os.path.join(options.root, local)
    path = _undisplayed(local)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return f"'{source}' no longer exists" + (f" (looked in '{options.root}')" if options.root else "")
    except OSError as exc:
        return f"cannot read '{source}': {exc.strerror or exc}"
    if not stat.S_ISREG(info.st_mode):  # checked before opening: a FIFO would block
        return f"'{source}' is no longer a regular file"
    return InputFile(source, kind, info.st_size, os_path=path)


def _undisplayed(path: str) -> str:
    """The name to open for a `source` whose non-UTF-8 bytes the tables show as `\\xNN`."""
    if "\\x" not in path or os.path.lexists(path):
        return path
    candidate = _ESCAPED_BYTE.sub(lambda match: chr(0xDC00 + int(match.group(1), 16)), path)
    return candidate if display_path(candidate) == path else path


def _read_source(source: str, wanted: set[RecordRef], options: ReadOptions) -> Iterator[ReadBack]:
    file = _input_file(source, options)
    if isinstance(file, str):
        yield from (ReadBack(ref, "gone", reason=file, parquet=kind_of(source) == "parquet")
                    for ref in wanted)
        return
    parquet = file.kind == "parquet"
    rows: dict[int, list[RecordRef]] = {}
    for ref in wanted:
        rows.setdefault(ref.source_row, []).append(ref)
    seen: set[int] = set()
    last = max(rows)
    try:
        if parquet:
            shards = _parquet_shards(file, set(rows))
        elif file.kind == "jsonl" and not file.remote:
            shards = _line_shards(file, rows)
        else:
            shards = [_whole(file)]
        reader = FieldReader(options.fields, file.hive, parquet, "openai")
        columns = reader.columns() if parquet else None
        for shard in shards:
            for raw in read_shard(shard, options.limit, columns, reader.json_columns()):
                if raw.row not in rows or raw.row in seen:
                    continue
                seen.add(raw.row)
                for ref in rows[raw.row]:
                    yield _verified(ref, raw.value, raw.sha256, raw.problem, file)
                if not parquet and raw.row >= last:
                    break
    except (OSError, pa.ArrowException, *DECOMPRESS_ERRORS) as exc:
        for row, refs in rows.items():
            if row not in seen:
                yield from (ReadBack(ref, "unreadable", reason=f"cannot read '{source}': {exc}",
                                     parquet=parquet) for ref in refs)
        return
    for row, refs in rows.items():
        if row not in seen:
            what = "row" if parquet else "line"
            reason = f"'{source}' has no {what} {row} any more (it is shorter, or that line is blank)"
            yield from (ReadBack(ref, "gone", reason=reason, parquet=parquet) for ref in refs)


def _verified(ref: RecordRef, value: Any, sha256: str, problem: str | None, file: InputFile) -> ReadBack:
    parquet = file.kind == "parquet"
    place = f"{ref.source} {'row' if parquet else 'line'} {ref.source_row}"
    if sha256 != ref.record_sha256:
        return ReadBack(ref, "changed", reason=f"{place} now holds another record than the one audited "
                        "(its SHA-256 differs): the input changed since", parquet=parquet)
    if problem is not None or value is None:
        return ReadBack(ref, "unreadable", reason=f"{place}: {problem or 'cannot be read'}", parquet=parquet)
    if parquet:
        return ReadBack(ref, "found", value, parquet=True, hive=file.hive)
    try:
        record = parse_json_record(value)
    except RecordProblem as exc:
        return ReadBack(ref, "unreadable", reason=f"{place}: {exc}")
    return ReadBack(ref, "found", record, hive=file.hive)


def _line_shards(file: InputFile, rows: Iterable[int]) -> list[Shard]:
    """A plain JSONL input: one shard per wanted line, its bytes found by searching for newlines
    (memchr speed, no parsing), so reading back a few records of a large file costs their own
    lines, not a parse of everything before them. Each shard starts at its line's start, as a
    planned shard does, so the line is read and hashed exactly as the audit read it."""
    shards: list[Shard] = []
    if file.size == 0:
        return shards
    with open(file.local, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        size = len(data)
        line, position = 1, 0
        for row in sorted(set(rows)):
            if row < 1:
                continue
            start = _after_newlines(data, position, size, row - line)
            if start is None or start >= size:
                break
            end = data.find(b"\n", start)
            stop = size if end < 0 else end + 1
            shards.append(Shard(len(shards), file, start, stop, row, 1, file.size))
            line, position = row + 1, stop
    return shards


_CHUNK = 8 * 1024 * 1024


def _after_newlines(data: mmap.mmap, position: int, size: int, count: int) -> int | None:
    """The position just after `count` more newlines from `position`; None when there are fewer.
    Long lines are found one by one; many short ones are counted a chunk at a time first."""
    while count > FIND_FIRST:
        end = min(position + _CHUNK, size)
        if end <= position:
            return None
        inside = count_newlines(data[position:end])
        if inside >= count:
            break
        count -= inside
        position = end
    while count:
        found = data.find(b"\n", position)
        if found < 0:
            return None
        position, count = found + 1, count - 1
    return position


def _whole(file: InputFile) -> Shard:
    """The whole JSONL input (plain or compressed) as one shard, from line 1."""
    return Shard(0, file, 0, file.size, 1, None, file.size)


def _parquet_shards(file: InputFile, rows: set[int]) -> list[Shard]:
    """One shard per row group holding a wanted row (the footer says where each begins)."""
    with open_input(file) as handle:
        metadata = pq.ParquetFile(handle).metadata
    shards: list[Shard] = []
    first = 0
    for group in range(metadata.num_row_groups):
        count = metadata.row_group(group).num_rows
        if any(first <= row < first + count for row in rows):
            shards.append(Shard(len(shards), file, group, group + 1, first, count))
        first += count
    return shards
