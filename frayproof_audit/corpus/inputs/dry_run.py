"""`audit --dry-run`: read and map a sample of every input; check nothing, write nothing.

A nightly job pointed at a new log layout learns whether its field map finds anything before a
night of input errors is committed. The dry run expands the inputs exactly as the audit would
(the same errors for a path that names nothing), reads the first `sample` records of every
input file (a JSONL line, a Parquet row; nothing else of the file is read, not even to count
its lines), parses each as strictly as the audit does, and counts per mapped field how many of
the records read have a value there (a Hive `key=value` folder counts, as it does for the
audit). It also counts the top-level keys the records do have, which is what a field map is
written from.

It fails (exit 2) when `before` or `after` is missing from more than half the records read:
the audit would then be mostly input errors, past the default `--max-input-error-rate`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from frayproof_audit.corpus.inputs.expansion import InputFile, expand_inputs
from frayproof_audit.corpus.inputs.field_map import FIELD_NAMES, FieldMap
from frayproof_audit.corpus.inputs.record_fields import RecordProblem, has_value, parse_json_record
from frayproof_audit.corpus.inputs.shard_plan import Shard
from frayproof_audit.corpus.inputs.shard_reader import read_shard
from frayproof_audit.report import EXIT_INPUT_ERROR, EXIT_PASS

DRY_RUN_SAMPLE = 100
"""Records read from the start of every input file."""
REQUIRED = ("before", "after")
_KEYS_SHOWN = 20


@dataclass(frozen=True, slots=True)
class FieldCount:
    """One mapped field: its path and how many records read had a value there."""

    name: str
    path: str
    found: int


@dataclass(frozen=True, slots=True)
class DryRun:
    """What a dry run read: per field, per input file, the keys the records have."""

    files: int
    records: int
    """Records read (every sampled line or row, readable or not)."""
    unreadable: int
    """Records that are not a JSON object or could not be read at all."""
    first_problem: str | None
    fields: tuple[FieldCount, ...]
    keys: tuple[tuple[str, int], ...]
    """Top-level keys of the readable records, the most common first."""
    per_file: tuple[tuple[str, int], ...]
    """(file, records read) for every input file."""
    sample: int

    @property
    def missing_required(self) -> tuple[str, ...]:
        """`before`/`after` when more than half the records read lack them (or none was read)."""
        counts = {count.name: count.found for count in self.fields}
        return tuple(name for name in REQUIRED if 2 * counts[name] < self.records or not self.records)

    @property
    def exit_code(self) -> int:
        return EXIT_INPUT_ERROR if self.missing_required else EXIT_PASS

    def to_text(self) -> str:
        lines = [f"Dry run: read the first {self.sample:,} record(s) of each of {self.files:,} input"
                 f" file(s), {self.records:,} record(s) in all; checked nothing, wrote nothing."]
        width = max(len(count.path) for count in self.fields)
        lines.append(f"  {'field':<10}  {'path':<{width}}  records with it")
        for count in self.fields:
            share = f" ({count.found / self.records:.0%})" if self.records else ""
            flag = ""
            if count.found == 0 and count.name in REQUIRED:
                flag = "  <- missing"
            elif count.found == 0 and count.path != count.name:
                flag = "  <- mapped, but in no record read"
            lines.append(f"  {count.name:<10}  {count.path:<{width}}  {count.found:,} / {self.records:,}"
                         f"{share}{flag}")
        if self.unreadable:
            lines.append(f"Unreadable records: {self.unreadable:,} (first: {self.first_problem})")
        if self.keys:
            shown = ", ".join(f"{key} ({n:,})" for key, n in self.keys[:_KEYS_SHOWN])
            more = f" and {len(self.keys) - _KEYS_SHOWN} more" if len(self.keys) > _KEYS_SHOWN else ""
            lines.append(f"Top-level keys of the records read: {shown}{more}")
        if self.missing_required:
            names = " and ".join(self.missing_required)
            lines.append(f"MAPPING: most records lack {names} where the field map looks: map it with"
                         f" --field NAME=PATH (a dotted path into the keys above) or --config FILE")
        else:
            lines.append("MAPPING OK: before and after were found in most records read")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dry_run": True,
            "sample": self.sample,
            "files": self.files,
            "records": self.records,
            "unreadable": self.unreadable,
            "first_problem": self.first_problem,
            "fields": [{"field": c.name, "path": c.path, "found": c.found} for c in self.fields],
            "keys": [{"key": key, "records": n} for key, n in self.keys],
            "per_file": [{"file": path, "records": n} for path, n in self.per_file],
            "missing_required": list(self.missing_required),
            "exit_code": self.exit_code,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)


def dry_run(
    inputs: tuple[str, ...], fields: FieldMap, out: str | None = None, sample: int = DRY_RUN_SAMPLE,
    repair_out: str | None = None,
) -> DryRun:
    """Read and map the first `sample` records of every input (see the module docstring).
    Raises `InputError` for inputs the audit would refuse."""
    files = expand_inputs(inputs, out, repair_out).files
    found: Counter[str] = Counter()
    keys: Counter[str] = Counter()
    records = unreadable = 0
    first_problem: str | None = None
    per_file = []
    for file in files:
        read = 0
        hive = dict(file.hive)
        for raw in read_shard(_whole(file), 2**62, None):
            if read >= sample:
                break
            read += 1
            label = f"{file.path} {'row' if file.kind == 'parquet' else 'line'} {raw.row}"
            record, problem = _record(raw.value, raw.problem, file.kind == "parquet")
            if record is None:
                unreadable += 1
                first_problem = first_problem or f"{label}: {problem}"
                continue
            keys.update(map(str, record))
            for name, path in fields.items():
                if has_value(record, path) or path in hive:
                    found[name] += 1
        records += read
        per_file.append((file.path, read))
    counts = tuple(FieldCount(name, fields.path(name), found[name]) for name in FIELD_NAMES)
    ordered = tuple(sorted(keys.items(), key=lambda item: (-item[1], item[0])))
    return DryRun(len(files), records, unreadable, first_problem, counts, ordered,
                  tuple(per_file), sample)


def _whole(file: InputFile) -> Shard:
    """A shard over all of `file`, read from its start (never planned: planning a plain JSONL
    file counts its every line)."""
    return Shard(0, file, 0, file.size, 0 if file.kind == "parquet" else 1, None, file.size)


def _record(value: Any, problem: str | None, parquet: bool) -> tuple[dict[str, Any] | None, str | None]:
    if problem is not None:
        return None, problem
    if parquet:
        return value, None
    try:
        return parse_json_record(value), None
    except RecordProblem as exc:
        return None, str(exc)
