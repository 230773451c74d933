"""Shard planning: cut the inputs into independent units of work without parsing a record.

A plain JSONL file is cut into byte ranges that start at line starts, so one big night of logs
spreads over every worker. The planner reads each plain file once, at memory speed
(`newlines.count_newlines`: memchr over long records), to count newlines: that is what lets
every worker name exact line numbers in its reasons without reading anything before its range.
Compressed files cannot be entered in the middle, so each is one shard (an incremental run may
ask for part of one: it is then decompressed from the start, and the bytes before the part are
skipped). Parquet shards are runs of whole row groups. The plan depends only on the inputs and
`shard_bytes`, never on the number of workers, so any `--jobs` gives the same part files.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.parquet as pq

from frayproof_audit.bounds import MAX_BYTES
from frayproof_audit.corpus.inputs.expansion import InputFile, InputFileError, open_input
from frayproof_audit.corpus.inputs.newlines import count_newlines

PAIRS = "pairs"
"""The source of the audit's own pair records (`InputFile.source`): cut into byte ranges."""

_SCAN_CHUNK = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Span:
    """A part of an input to audit (`--incremental`): from byte `start`, a line start `line`
    lines into the file, to byte `stop` (None: to the end). For a compressed input the bytes
    are those of the decompressed stream."""

    start: int
    line: int
    stop: int | None = None
    stop_line: int | None = None
    """Lines before `stop`, when it is known."""


@dataclass(frozen=True, slots=True)
class Shard:
    """One unit of work. `start`/`stop` are bytes (JSONL) or row-group numbers (Parquet).

    `first_row` is the 1-based line number of the first line (JSONL) or the 0-based index of
    the first row (Parquet). `records` is the number of lines or rows when the plan knows it.
    """

    ordinal: int
    file: InputFile
    start: int
    stop: int
    first_row: int
    records: int | None
    size: int = 0
    """Bytes of the input file this shard stands for (drives progress, ETA and `--jobs -1`)."""
    stream_stop: int | None = None
    """Compressed input: where in the decompressed stream to stop (None: at its end); `start`
    is where to begin in it."""
    whole: bool = False
    """A file a source reads (`InputFile.source`, a session file): read from its first line,
    since each compaction's before is the replay of everything above it, up to `stop` (plain
    JSONL) or `stream_stop`; only the rows of lines `first_row` to `first_row + records - 1`
    (to its end when `records` is None) are this shard's."""

    @property
    def name(self) -> str:
        """A human-readable, unique name: what the summary and `runs` say when it failed."""
        path = self.file.path
        if self.whole:
            if self.first_row <= 1 and self.start == 0:
                return f"{path} [whole file]"
            tail = "" if self.records is None else f"-{self.first_row + self.records - 1}"
            return f"{path} [whole file, rows of lines {self.first_row}{tail}]"
        if self.file.kind == "parquet":
            groups = f"row group {self.start}" if self.stop - self.start == 1 else (
                f"row groups {self.start}-{self.stop - 1}"
            )
            rows = f", rows {self.first_row}-{self.first_row + (self.records or 1) - 1}"
            return f"{path} [{groups}{rows}]"
        if self.file.kind != "jsonl":
            if self.start == 0 and self.stream_stop is None:
                return f"{path} [whole file]"
            stop = "the end" if self.stream_stop is None else f"{self.stream_stop - 1}"
            return f"{path} [decompressed bytes {self.start}-{stop}, from line {self.first_row}]"
        last = self.first_row + (self.records or 1) - 1
        return f"{path} [bytes {self.start}-{self.stop - 1}, lines {self.first_row}-{last}]"

    @property
    def weight(self) -> int:
        return self.size


def plan(
    files: tuple[InputFile, ...], shard_bytes: int, spans: Mapping[str, tuple[Span, ...]] | None = None
) -> tuple[Shard, ...]:
    """All shards of all input files, numbered in file order (the order of the final tables).

    `spans` maps a JSONL file's path (plain or compressed) to the parts of it to audit (an
    incremental run): only those are planned. Other files are planned whole."""
    shards: list[Shard] = []
    for file in files:
        parts = (spans or {}).get(file.path)
        if file.source != PAIRS:
            for piece in _source_shards(file, parts):
                shards.append(replace(piece, ordinal=len(shards)))
            continue
        if file.kind != "parquet" and file.kind != "jsonl" and parts is not None:
            for span in parts:  # part of a compressed file: one shard each
                shards.append(Shard(len(shards), file, span.start, file.size, span.line + 1, None,
                                    file.size, span.stop))
            continue
        pieces: list[tuple[int, int, int, int | None]]
        if file.kind == "jsonl":
            wanted = parts if parts is not None else (Span(0, 0),)
            pieces = [piece for span in wanted for piece in _jsonl_ranges(
                file, shard_bytes, span.start, span.line, file.size if span.stop is None else span.stop)]
        elif file.kind == "parquet":
            pieces = list(_parquet_groups(file, shard_bytes))
        else:
            pieces = [(0, file.size, 1, None)]  # records unknown until decompressed
        rows = sum(piece[3] or 0 for piece in pieces)
        for start, stop, first_row, records in pieces:
            if file.kind == "jsonl":
                size = stop - start
            elif file.kind == "parquet":
                size = file.size * (records or 0) // rows if rows else 0
            else:
                size = file.size
            shards.append(Shard(len(shards), file, start, stop, first_row, records, size))
    return tuple(shards)


def _source_shards(file: InputFile, parts: tuple[Span, ...] | None) -> Iterator[Shard]:
    """A file a source reads is one shard (the whole file is replayed), or one per part of it
    an incremental run audits (each still replays the file from its start)."""
    if file.source_problem is not None or file.kind not in ("jsonl", "jsonl.gz", "jsonl.zst"):
        yield Shard(0, file, 0, file.size, 1, None, file.size, whole=True)
        return
    wanted = parts if parts is not None else (Span(0, 0),)
    for span in wanted:
        if file.kind != "jsonl":
            yield Shard(0, file, span.start, file.size, span.line + 1,
                        None if span.stop_line is None else span.stop_line - span.line,
                        file.size, span.stop, whole=True)
            continue
        stop = file.size if span.stop is None else span.stop
        pieces = list(_jsonl_ranges(file, MAX_BYTES, span.start, span.line, stop))
        if pieces:
            yield Shard(0, file, pieces[0][0], pieces[-1][1], pieces[0][2],
                        sum(piece[3] for piece in pieces), file.size, whole=True)


def _jsonl_ranges(
    file: InputFile, shard_bytes: int, begin: int = 0, lines_skipped: int = 0, end: int | None = None
) -> Iterator[tuple[int, int, int, int]]:
    """(start, stop, first line, lines) ranges from byte `begin` (a line start, `lines_skipped`
    lines into the file) to byte `end` (a line start or the size at expansion); every stop is
    just after a newline or at `end`."""
    limit = file.size if end is None else end
    start, first_line, lines_before = begin, lines_skipped + 1, lines_skipped
    target = begin + shard_bytes
    offset = begin
    try:
        with open_input(file) as handle:
            handle.seek(begin)
            while offset < limit:  # bytes appended after expansion belong to the next run
                chunk = handle.read(min(_SCAN_CHUNK, limit - offset))
                if not chunk:
                    break
                chunk_end = offset + len(chunk)
                counted = 0  # newlines in chunk[:counted] are already in lines_before
                while target <= chunk_end:
                    newline = chunk.find(b"\n", max(target - 1 - offset, counted))
                    if newline < 0:
                        break
                    lines_before += count_newlines(chunk, counted, newline + 1)
                    counted = newline + 1
                    stop = offset + counted
                    if stop < limit:
                        yield start, stop, first_line, lines_before - first_line + 1
                        start, first_line = stop, lines_before + 1
                    target = stop + shard_bytes
                lines_before += count_newlines(chunk, counted)
                offset = chunk_end
    except OSError as exc:
        raise InputFileError(f"cannot read input '{file.path}': {exc.strerror or exc}") from None
    if start < offset:
        trailing = 0 if offset == 0 else lines_before - first_line + 1
        with open_input(file) as handle:
            handle.seek(offset - 1)
            if handle.read(1) != b"\n":
                trailing += 1  # a last line without a newline is still a line
        yield start, offset, first_line, trailing


def _parquet_groups(file: InputFile, shard_bytes: int) -> Iterator[tuple[int, int, int, int | None]]:
    """Consecutive row groups, grouped until their stored size reaches `shard_bytes`.

    A file whose footer cannot be read (not Parquet, truncated) is one shard with `records`
    unknown: its reader reports it as one input error, and the rest of the run goes on."""
    try:
        with open_input(file) as handle:  # a file object: a colon is never a URI scheme
            metadata = pq.ParquetFile(handle).metadata
    except (OSError, pa.ArrowException):
        yield 0, 1, 0, None
        return
    first_group, first_row, rows, size = 0, 0, 0, 0
    for group in range(metadata.num_row_groups):
        info = metadata.row_group(group)
        rows += info.num_rows
        size += info.total_byte_size
        if size >= shard_bytes or group == metadata.num_row_groups - 1:
            yield first_group, group + 1, first_row, rows
            first_group, first_row, rows, size = group + 1, first_row + rows, 0, 0
