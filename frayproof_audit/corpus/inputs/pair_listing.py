"""`frayproof-audit pairs LOGS...`: the pairs a run would derive from agents' logs, to look at, keep
or feed elsewhere.

`list_pairs` expands the inputs and chooses each file's source exactly as `audit` does
(`expansion`, `source_choice`, `shard_plan`) and reads every file a source reads with the one
reader the audit's worker uses (`session_reader.read_source_rows`), each row as the record the
worker judges (`record_fields.record_of`): what `pairs` shows is what `audit` judges, and
auditing the records `pairs -o` writes gives the verdicts auditing the logs gives, row for row.
Files of pair records are named, not copied: the audit reads them as they are.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from frayproof_audit.corpus.inputs.expansion import expand_inputs
from frayproof_audit.corpus.inputs.record_fields import INPUT_ERROR, record_of
from frayproof_audit.corpus.inputs.session_reader import SourceRows, read_source_rows
from frayproof_audit.corpus.inputs.shard_plan import plan
from frayproof_audit.corpus.inputs.source_choice import PAIRS, accepts, choose_sources
from frayproof_audit.errors import InputError
from frayproof_audit.jsonio import compact
from frayproof_audit.report import EXIT_INPUT_ERROR, EXIT_PASS

DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024
"""As `audit --max-record-bytes`: a longer line is a row of its own, never held."""
SNAPSHOTS = ("before", "after")


@dataclass(frozen=True, slots=True)
class ListedFile:
    """One file a source read: its rows as records, and what it held."""

    path: str
    found: SourceRows
    records: tuple[dict[str, Any], ...]
    """One per row, in line order: a pair (`before`, `after` and the provenance) or a row
    without one (`input_error` says why)."""
    messages: tuple[tuple[int | None, int | None], ...]
    """Messages before and after of each record as the audit counts them (the neutral model;
    None where the snapshot does not load)."""

    @property
    def source(self) -> str:
        return self.found.source

    @property
    def input_errors(self) -> int:
        return sum(INPUT_ERROR in record for record in self.records) + (self.found.problem is not None)


@dataclass(frozen=True, slots=True)
class PairListing:
    """What `pairs` found: every file a source read, the files of pair records, the files left
    out by name; the records to write, the table and the exit code."""

    files: tuple[ListedFile, ...]
    pair_files: tuple[str, ...] = ()
    """Files of the audit's own records (`--source pairs`, or no evidence of a source)."""
    notes: tuple[str, ...] = field(default=())

    @property
    def pairs(self) -> int:
        return sum(len(file.records) for file in self.files) - self.input_errors

    @property
    def input_errors(self) -> int:
        return sum(file.input_errors for file in self.files)

    @property
    def exit_code(self) -> int:
        """0 when every row is a pair; 2 when a row is an input error (a line that is not JSON, a
        compaction whose before or after cannot be rebuilt), or nothing was read as logs."""
        if self.input_errors or not self.files:
            return EXIT_INPUT_ERROR
        return EXIT_PASS

    def payload(self) -> str:
        """The records as JSON lines (`pairs -o`): one per row, every file's in order."""
        return "".join(compact(record).decode("utf-8") + "\n"
                       for file in self.files for record in file.records)

    def account(self, output: str) -> str:
        """What `pairs -o` says it wrote."""
        return (f"wrote {self.pairs:,} pair(s) and {self.input_errors:,} input error(s) from"
                f" {len(self.files):,} file(s) to {output}")

    def to_json(self) -> str:
        files = []
        for file in self.files:
            found = file.found
            rows = [{**{key: value for key, value in record.items() if key not in SNAPSHOTS},
                     "messages_before": before, "messages_after": after}
                    for record, (before, after) in zip(file.records, file.messages, strict=True)]
            files.append({
                "path": file.path, "source": file.source, "problem": found.problem,
                "counts": None if found.counts is None else _counts(found.counts),
                "notes": list(found.notes), "pairs": rows,
                "lineages": [_lineage(lineage) for lineage in found.lineages]})
        return json.dumps({"pairs": self.pairs, "input_errors": self.input_errors,
                           "files": files, "pair_files": list(self.pair_files),
                           "notes": list(self.notes)}, indent=2, ensure_ascii=False)

    def to_text(self) -> str:
        lines: list[str] = []
        for file in self.files:
            lines.extend(_file_text(file))
        for path in self.pair_files:
            lines.append(f"{path} (pairs): pair records, audited as they are")
        lines.extend(f"Note: {note}" for note in self.notes)
        lines.append(f"{self.pairs:,} pair(s), {self.input_errors:,} input error(s) in"
                     f" {len(self.files):,} file(s)")
        return "\n".join(lines)


def list_pairs(inputs: tuple[str, ...] | list[str], source: str = "auto",
               max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES) -> PairListing:
    """The pairs `audit INPUTS --source SOURCE` would judge, as records. Raises `InputError`
    for an input path that names nothing (as `audit` does, before reading anything)."""
    expanded = expand_inputs(inputs, accepts=accepts(source))
    sourced = choose_sources(expanded.files, source)
    listed: list[ListedFile] = []
    pair_files = [file.path for file in sourced.files if file.source == PAIRS]
    readable = tuple(file for file in sourced.files if file.source != PAIRS)
    for shard in plan(readable, max_record_bytes):
        found = read_source_rows(shard, max_record_bytes)
        listed.append(_listed(shard.file.path, found))
    return PairListing(tuple(listed), tuple(pair_files), (*expanded_notes(expanded), *sourced.notes()))


def expanded_notes(expanded: Any) -> tuple[str, ...]:
    note = expanded.note()
    return (note,) if note else ()


def _listed(path: str, found: SourceRows) -> ListedFile:
    if found.problem is not None or found.counts is None:
        return ListedFile(path, found, (), ())
    from frayproof_audit.sources import get_source

    fmt = get_source(found.source).format
    records = tuple(record_of(row, path, found.source, fmt, found.label) for row in found.rows)
    return ListedFile(path, found, records, tuple(_messages(record) for record in records))


def _messages(record: dict[str, Any]) -> tuple[int | None, int | None]:
    """Messages of each snapshot in the neutral model, as `pairs.messages_before` counts them."""
    from frayproof_audit.formats import get_format

    if record.get("before") is None:
        return None, None
    try:
        fmt = get_format(record["format"])
    except InputError:
        return None, None
    counts: list[int | None] = []
    for name in SNAPSHOTS:
        try:
            counts.append(len(fmt.load(record[name])))
        except InputError:
            counts.append(None)
    return counts[0], counts[1]


def _counts(counts: Any) -> dict[str, int]:
    return {name: getattr(counts, name) for name in ("lines", "events", "other", "problems",
                                                     "blank", "calls")}


def _lineage(lineage: Any) -> dict[str, Any]:
    return {"session_id": lineage.session_id, "grouped_by": lineage.grouped_by,
            "counts": dict(lineage.counts), "notes": list(lineage.notes),
            "transitions": [{"row": t.row, "role": t.role, "classification": t.classification,
                             "previous_row": t.previous_row, "reason": t.reason,
                             "pair_id": None if t.ordinal is None
                             else f"{lineage.session_id}:{t.ordinal}"}
                            for t in lineage.transitions]}


def _arrow(before: int | None, after: int | None) -> str:
    shown = ["-" if value is None else f"{value:,}" for value in (before, after)]
    return f"{shown[0]} → {shown[1]}"


def _file_text(file: ListedFile) -> list[str]:
    found = file.found
    if found.problem is not None or found.counts is None:
        return [f"{file.path} ({file.source}): input error: {found.problem}", ""]
    counts = found.counts
    head = (f"{file.path} ({file.source}): {counts.lines:,} {found.label}(s),"
            f" {len(file.records) - file.input_errors:,} pair(s)")
    if file.input_errors:
        head += f", {file.input_errors:,} input error(s)"
    if counts.calls:
        head += f" from {counts.calls:,} model call(s)"
    lines = [head]
    table = [("pair", found.label, "event", "trigger", "messages", "tokens", "fidelity",
              "compactor")]
    problems: list[str] = []
    for record, (before, after) in zip(file.records, file.messages, strict=True):
        if INPUT_ERROR in record:
            problems.append(f"  {found.label} {record['source_row']}: input error:"
                            f" {record[INPUT_ERROR]}")
            continue
        table.append((record["pair_id"], f"{record['source_row']}", record["event"],
                      record["trigger"] or "-", _arrow(before, after),
                      _arrow(record["tokens_before"], record["tokens_after"]),
                      record["fidelity"], record["compactor"]))
    if len(table) > 1:
        widths = [max(len(row[column]) for row in table) for column in range(len(table[0]))]
        for row in table:
            cells = [cell.rjust(width) if column in (1, 4, 5) else cell.ljust(width)
                     for column, (cell, width) in enumerate(zip(row, widths, strict=True))]
            lines.append("  " + "  ".join(cells).rstrip())
    lines.extend(problems)
    for lineage in found.lineages:
        lines.extend(_lineage_text(lineage, found.label))
    lines.extend(f"  note: {note}" for note in found.notes)
    lines.append("")
    return lines


def _lineage_text(lineage: Any, label: str) -> list[str]:
    counts = " · ".join(f"{name} {count:,}" for name, count in lineage.counts if count)
    lines = [f"  lineage {lineage.session_id} (by {lineage.grouped_by}): {counts or 'no transition'}"]
    for transition in lineage.transitions:
        kind = transition.classification or "-"
        pair = "" if transition.ordinal is None else f" → pair {lineage.session_id}:{transition.ordinal}"
        lines.append(f"    {label} {transition.row:>5}  {transition.role:<10}  {kind:<9}  "
                     f"{transition.reason}{pair}")
    lines.extend(f"    note: {note}" for note in lineage.notes)
    return lines
