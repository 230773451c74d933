"""`read_pair_records`: every pair `audit` would judge in some logs, as a plain record in memory.

For a command that learns from a night of logs rather than judging it record by record
(`suggest`). The inputs are expanded and each file's source chosen exactly as `audit` does
(`expansion`, `source_choice`, `shard_plan`); a file of pair records is read with the audit's
reader (`shard_reader`: JSON lines plain, gzip or zstd, Parquet; local or on an object store)
and mapped with its field map (`--field`, `--config`), a file a source reads gives the rows
the audit's worker judges (`session_reader`, `record_fields.record_of`), and both go through the
one `FieldReader` the worker reads a record's fields with. What the audit would count as an
input error (a line that is not JSON, a missing snapshot, a `logged_at` that is no time, a
compaction that cannot be rebuilt) is an `InputProblem` naming the file and the line, never
dropped and never raised.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from frayproof_audit.corpus.inputs.expansion import expand_inputs
from frayproof_audit.corpus.inputs.field_map import FieldMap
from frayproof_audit.corpus.inputs.record_fields import (
    INPUT_ERROR,
    FieldReader,
    RecordProblem,
    parse_json_record,
    record_of,
)
from frayproof_audit.corpus.inputs.session_reader import read_source_rows
from frayproof_audit.corpus.inputs.shard_plan import Shard, plan
from frayproof_audit.corpus.inputs.shard_reader import read_shard
from frayproof_audit.corpus.inputs.source_choice import PAIRS, accepts, choose_sources
from frayproof_audit.formats import get_format

DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024
"""As `audit --max-record-bytes`: a longer record is an input error, never loaded."""
_ONE_SHARD = 1 << 62
"""Shard size for reading: every file of pair records in one piece (nothing runs in parallel)."""
FIELDS = ("pair_id", "session_id", "compactor", "logged_at", "format", "tools", "before", "after")
"""The keys of a record `read_pair_records` gives (the audit's record shape)."""


@dataclass(frozen=True, slots=True)
class InputProblem:
    """A record (or a whole file) that holds no pair: where it is and why."""

    source: str
    row: int
    """Its line (row of a Parquet file, checkpoint of a database); a file no source can read is
    one problem at its first line, as the audit records it."""
    label: str
    """What a row is called there: `line`, `row` or `checkpoint`."""
    reason: str

    @property
    def where(self) -> str:
        return f"{self.source} {self.label} {self.row}"

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "row": self.row, "label": self.label, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class PairRecords:
    """What `read_pair_records` read: the pairs in file and line order, where each came from,
    and every record that holds no pair."""

    records: tuple[dict[str, Any], ...]
    """Each with the keys of `FIELDS`: snapshots as plain JSON, `logged_at` as RFC 3339 text
    (UTC), `format` the record's own or the default, `tools` None when it has none."""
    places: tuple[InputProblem, ...]
    """Where each record is (`InputProblem.where`; the reason is empty)."""
    problems: tuple[InputProblem, ...]
    files: tuple[str, ...]
    """Every file read, in order (pair records and the files sources read)."""
    notes: tuple[str, ...] = ()
    """What expansion and the sources said (files left out, dataset folders skipped)."""

    @property
    def rows(self) -> int:
        """Records read: pairs and input errors."""
        return len(self.records) + len(self.problems)


def read_pair_records(inputs: tuple[str, ...] | list[str], source: str = "auto",
                      fields: FieldMap | None = None, input_format: str = "openai",
                      max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES) -> PairRecords:
    """Every pair in `inputs` as `audit INPUTS --source SOURCE` reads it (see the module
    docstring). Raises `InputError` for an input path that names nothing or an unknown source,
    as `audit` does before reading anything."""
    fields = fields or FieldMap()
    expanded = expand_inputs(inputs, accepts=accepts(source))
    sourced = choose_sources(expanded.files, source)
    records: list[dict[str, Any]] = []
    places: list[InputProblem] = []
    problems: list[InputProblem] = []
    notes: list[str] = []
    files: list[str] = []
    for shard in plan(sourced.files, _ONE_SHARD):
        if shard.file.path not in files:
            files.append(shard.file.path)
        rows = _source_rows(shard, max_record_bytes, notes) if shard.file.source != PAIRS \
            else _pair_rows(shard, fields, input_format, max_record_bytes)
        for place, record in rows:
            if isinstance(record, str):
                problems.append(InputProblem(place.source, place.row, place.label, record))
            else:
                records.append(record)
                places.append(place)
    note = expanded.note()
    return PairRecords(tuple(records), tuple(places), tuple(problems), tuple(files),
                       (*([note] if note else []), *sourced.notes(), *notes))


Row = tuple[InputProblem, "dict[str, Any] | str"]
"""Where a row is, and its record or the reason it holds none."""


def _pair_rows(shard: Shard, fields: FieldMap, input_format: str, limit: int) -> Iterator[Row]:
    file = shard.file
    parquet = file.kind == "parquet"
    label = "row" if parquet else "line"
    reader = FieldReader(fields, file.hive, parquet, input_format)
    columns = reader.columns() if parquet else None
    for raw in read_shard(shard, limit, columns, reader.json_columns()):
        place = InputProblem(file.path, raw.row, label, "")
        if raw.problem is not None:
            yield place, raw.problem
        elif parquet and raw.size > limit:
            yield place, f"record is {raw.size} bytes, over --max-record-bytes {limit}"
        elif parquet:
            yield place, _record(raw.value, reader)
        else:
            try:
                record = parse_json_record(raw.value)
            except RecordProblem as exc:
                yield place, str(exc)
                continue
            yield place, _record(record, reader)


def _source_rows(shard: Shard, limit: int, notes: list[str]) -> Iterator[Row]:
    file = shard.file
    found = read_source_rows(shard, limit)
    notes.extend(f"{file.path}: {note}" for note in found.notes)
    if found.problem is not None:
        yield InputProblem(file.path, found.first_row, found.label, ""), found.problem
        return
    from frayproof_audit.sources import get_source

    fmt = get_source(file.source).format
    reader = FieldReader(FieldMap(), (), False, fmt)
    for row in found.rows:
        place = InputProblem(file.path, row.source_row, found.label, "")
        record = record_of(row, file.path, file.source, fmt, found.label, located=False)
        said = record.get(INPUT_ERROR)
        yield place, said if isinstance(said, str) and said else _record(record, reader)


def _record(record: dict[str, Any], reader: FieldReader) -> dict[str, Any] | str:
    """The record's pair in the audit's shape, or why it holds none (the worker's reading)."""
    meta, problem = reader.meta(record)
    if problem is not None:
        return problem
    try:
        fmt = get_format(meta.format or reader.default_format)
        before = reader.snapshot(record, "before", fmt.containers)
        after = reader.snapshot(record, "after", fmt.containers)
    except RecordProblem as exc:
        return str(exc)
    logged_at = meta.logged_at.isoformat() if meta.logged_at is not None else None
    return {"pair_id": meta.pair_id, "session_id": meta.session_id, "compactor": meta.compactor,
            "logged_at": logged_at, "format": meta.format, "tools": meta.tools,
            "before": before, "after": after}
