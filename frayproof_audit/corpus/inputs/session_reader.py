"""A file a source reads (`InputFile.source`), into its rows: what `audit` judges and `pairs` shows.

One function, `read_source_rows`, reads a shard of such a file for both: the worker audits its
rows, the `pairs` command writes or lists them (`derived_pairs.py`), so what `pairs` shows is
exactly what `audit` judges. The file is read from its first line (each compaction's before is
the replay of everything above it) through the run's own readers (plain, gzip, zstd; local or
on an object store; a line over `--max-record-bytes` is a row of its own, never held), or, for
a file that is no JSON lines (a checkpoint database, a Parquet export), through the source's own
`read`. The source derives the rows (`frayproof_audit.sources.derive`); those of the lines the
shard stands for are kept (an incremental run audits only the lines no other run audited: a
session file that grew overnight gives only its new compactions).

Each row keeps the SHA-256 of the line (or row, or checkpoint) it stands at, the identity
`pairs.record_sha256` holds.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import pyarrow as pa

from frayproof_audit.corpus.inputs.shard_plan import Shard
from frayproof_audit.corpus.inputs.shard_reader import read_shard
from frayproof_audit.errors import InputError

if TYPE_CHECKING:
    from frayproof_audit.sources import Counts, Lineage, Row

_NOT_JSON = b"\x00\n"
"""What the source is handed for a line the reader could not give it (too long, a broken
stream): no JSON, so the source counts it as a bad line, and the reader's reason replaces the
source's."""
LINE_KINDS = frozenset({"jsonl", "jsonl.gz", "jsonl.zst"})
LABELS = {"parquet": "row", "sqlite": "checkpoint", "postgres": "checkpoint"}
"""What a row's place is called, by kind of file (`line` for JSON lines)."""


@dataclass(frozen=True, slots=True)
class SourceRows:
    """The rows of one shard of a file a source reads, and what the file held."""

    source: str
    rows: tuple[Row, ...] = ()
    """In place order; a `LineProblem`'s reason holds no place (the caller names it)."""
    hashes: dict[int, str] = field(default_factory=dict)
    """`source_row` → SHA-256 of the line (row, checkpoint) there, without its line ending."""
    counts: Counts | None = None
    """Of the lines the shard stands for (None: the file could not be read)."""
    notes: tuple[str, ...] = ()
    lineages: tuple[Lineage, ...] = ()
    problem: str | None = None
    """Why the file as a whole gives no rows (evidence of two sources, an unreadable database):
    it is then one input-error row."""
    label: str = "line"

    @property
    def first_row(self) -> int:
        """Where a problem of the whole file is reported: its first line (row 0 of a Parquet
        file, as for a Parquet footer that cannot be read)."""
        return 0 if self.label == "row" else 1


def label_of(kind: str) -> str:
    return LABELS.get(kind, "line")


def read_source_rows(shard: Shard, max_record_bytes: int) -> SourceRows:
    """The rows of `shard` (a `Shard.whole` shard of a file a source reads). Never raises for
    what a file holds: a file no source can read is one `problem`."""
    file = shard.file
    label = label_of(file.kind)
    if file.source_problem is not None:
        return SourceRows(file.source, problem=file.source_problem, label=label)
    from frayproof_audit.sources import derive, file_siblings, get_source, read_source

    source = get_source(file.source)
    hashes: dict[int, str] = {}
    replaced: dict[int, str] = {}
    blank: set[int] = set()
    lines: Iterable[bytes]
    if file.kind in LINE_KINDS:
        lines = _lines(shard, max_record_bytes, hashes, replaced, blank)
    else:
        lines = _hashed(read_source(source, file.local), hashes)
    siblings = None if file.remote or file.database else file_siblings(file.local)
    try:
        found = derive(source, file.path, lines, siblings)
    except (InputError, OSError, pa.ArrowException, sqlite3.Error) as exc:
        # a database or an export its reader refuses (a source's own bug is raised on)
        return SourceRows(file.source, problem=f"cannot read it as {file.source}: {exc}", label=label)
    last = None if shard.records is None else shard.first_row + shard.records - 1
    rows = [_placed(row, replaced, label) for row in found.rows
            if row.source_row >= shard.first_row and (last is None or row.source_row <= last)]
    counts = found.counts
    if shard.first_row > 1 or (last is not None and last < counts.lines):
        counts = _window_counts(rows, counts, shard.first_row, last, blank)
    lineages = found.lineages
    if label == "row":  # a Parquet export's rows are numbered from 0, as the table's rows are
        hashes = {row - 1: sha for row, sha in hashes.items()}
        rows = [_from_zero(row) for row in rows]
        lineages = tuple(replace(lineage, transitions=tuple(
            replace(step, row=step.row - 1, previous_row=_less(step.previous_row))
            for step in lineage.transitions)) for lineage in lineages)
    return SourceRows(file.source, tuple(rows), hashes, counts, found.notes, lineages,
                      label=label)


def _less(row: int | None) -> int | None:
    return None if row is None else row - 1


def _from_zero(row: Row) -> Row:
    """A row of a Parquet export numbered from 0 (the source numbers its rows from 1)."""
    from frayproof_audit.sources import Compaction

    if isinstance(row, Compaction) and row.diff is not None:
        diff = replace(row.diff, previous_row=row.diff.previous_row - 1,
                       summarizer_row=_less(row.diff.summarizer_row))
        return replace(row, source_row=row.source_row - 1, diff=diff)
    return replace(row, source_row=row.source_row - 1)


def _lines(shard: Shard, limit: int, hashes: dict[int, str], replaced: dict[int, str],
           blank: set[int]) -> Iterator[bytes]:
    """Every line of the file from its first, up to where the shard ends, through the run's
    reader (which skips blank lines: they are handed on as blank, so lines keep their number)."""
    reading = replace(shard, start=0, first_row=1, records=None,
                      stop=shard.stop if shard.file.kind == "jsonl" else shard.file.size)
    expected = 1
    for raw in read_shard(reading, limit, None):
        while expected < raw.row:
            blank.add(expected)
            yield b"\n"
            expected += 1
        hashes[raw.row] = raw.sha256
        if raw.problem is not None:
            replaced[raw.row] = raw.problem
            yield _NOT_JSON
        else:
            yield raw.value
        expected = raw.row + 1


def _hashed(lines: Iterator[bytes | str], hashes: dict[int, str]) -> Iterator[bytes]:
    for row, line in enumerate(lines, 1):
        data = line.encode("utf-8") if isinstance(line, str) else line
        hashes[row] = hashlib.sha256(data.rstrip(b"\r\n")).hexdigest()
        yield data


def _placed(row: Row, replaced: dict[int, str], label: str) -> Row:
    """A row whose reason (a `LineProblem`'s, a `Compaction`'s problem) says no place (the
    caller names file and line), and says the reader's reason where the reader could not give
    the line."""
    from frayproof_audit.sources import LineProblem

    if not isinstance(row, LineProblem):
        said = f"line {row.source_row}: "
        if row.problem is not None and row.problem.startswith(said):
            return replace(row, problem=row.problem[len(said):])
        return row
    reason = replaced.get(row.source_row)
    if reason is None:
        reason = row.reason
        for said in (f"line {row.source_row} ", f"{label} {row.source_row} "):
            if reason.startswith(said):
                reason = reason[len(said):]
                break
    return replace(row, reason=reason)


def _window_counts(rows: list[Row], counts: Counts, first: int, last: int | None,
                   blank: set[int]) -> Counts:
    """The counts of the lines `first` to `last` (an incremental run's part of a file)."""
    from frayproof_audit.sources import Compaction, Counts

    end = counts.lines if last is None else min(last, counts.lines)
    lines = max(0, end - first + 1)
    events = len({row.source_row for row in rows if isinstance(row, Compaction)})
    problems = sum(not isinstance(row, Compaction) for row in rows)
    blanks = sum(first <= row <= end for row in blank)
    return Counts(lines=lines, events=events, other=max(0, lines - events - problems - blanks),
                  problems=problems, blank=blanks, calls=counts.calls)

