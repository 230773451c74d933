"""One committed run's findings, surviving mutants and unjudged records, read back from its tables.

`RunSummary` holds counts; CI outputs (SARIF, GitHub annotations, JUnit) need each finding and
the record it came from. They read them here, from the files the run's `runs` row lists (never
another run's), at most `limit` of each kind, most severe first, with the totals, so a report on
a corpus of millions stays small. A finding or a mutant carries its record's `source` and
`source_row` (the JSONL line, or the Parquet row), matched by `pair_id` within the same part file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from frayproof_audit.corpus.dataset.checked_files import read_run_files
from frayproof_audit.corpus.inputs.expansion import kind_of
from frayproof_audit.corpus.store.arrow_tables import SCHEMAS
from frayproof_audit.corpus.store.pair_status import PairStatus

_PART = "_part"


@cache
def _is_parquet(source: str) -> bool:
    return kind_of(source) == "parquet"


@dataclass(frozen=True, slots=True)
class Record:
    """Where a pair came from: `line` for JSONL sources (1-based), `row` for Parquet (0-based)."""

    pair_id: str
    source: str
    source_row: int
    compactor: str | None

    @property
    def is_parquet(self) -> bool:
        return _is_parquet(self.source)


@dataclass(frozen=True, slots=True)
class FindingRow:
    record: Record
    check: str
    code: str | None
    severity: str
    snapshot: str
    message_index: int | None
    tool_call_id: str | None
    pin: str | None
    rule: str | None
    message: str
    origin: str | None = None
    """`findings.origin`: `introduced`, `inherited`, or None (a run written before blame)."""


@dataclass(frozen=True, slots=True)
class SurvivorRow:
    record: Record
    operator: str
    description: str | None
    sites: tuple[str, ...]
    message_index: int | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class UnjudgedRow:
    """A record with status `input_error` or `engine_error`, and why."""

    record: Record
    status: str
    reason: str


@dataclass(frozen=True, slots=True)
class PairChecks:
    """A judged pair (pass or fail) and the checks with an error finding on it."""

    record: Record
    failing_checks: frozenset[str]


@dataclass(frozen=True, slots=True)
class OperatorTally:
    """One pair × operator: mutants caught and survived (for JUnit's mutation suite)."""

    record: Record
    operator: str
    caught: int
    survived: int


@dataclass(frozen=True, slots=True)
class RunDetails:
    """At most `limit` rows of each kind, and how many there are in all."""

    findings: tuple[FindingRow, ...]
    findings_total: int
    survivors: tuple[SurvivorRow, ...]
    survivors_total: int
    unjudged: tuple[UnjudgedRow, ...]
    unjudged_total: int
    judged: tuple[PairChecks, ...]
    judged_total: int
    operators: tuple[OperatorTally, ...]
    operators_total: int


def run_details(out: str | os.PathLike[str], run_id: str, limit: int) -> RunDetails:
    """The rows of committed run `run_id` in dataset `out` that CI outputs show (see module doc).

    Findings come errors first, then warnings, each in record order; judged pairs failing ones
    first. Raises `DatasetError` when `out` is not a dataset or the run's files are damaged.
    """
    pairs = _read(out, "pairs", run_id, ["pair_id", "source", "source_row", "compactor", "status",
                                        "input_error", "engine_error"])
    findings = _read(out, "findings", run_id, ["pair_id", "check", "code", "severity", "snapshot",
                                              "message_index", "tool_call_id", "pin", "rule",
                                              "message", "origin"])
    mutants = _read(out, "mutants", run_id, ["pair_id", "operator", "description", "message_index",
                                            "sites", "status", "reason"])
    records = _Records(pairs)

    chosen = [_take(findings, pc.equal(findings["severity"], severity), limit)
              for severity in ("error", "warning")]
    others = pc.invert(pc.is_in(findings["severity"], pa.array(["error", "warning"])))
    chosen.append(_take(findings, others, limit))
    survived = pc.equal(mutants["status"], "survived")
    survivors = _take(mutants, survived, limit)
    tallies, operators_total = _tallies(mutants, limit)
    records.need(*chosen, survivors, tallies)

    finding_rows = [
        FindingRow(records.get(row), row["check"], row["code"], row["severity"], row["snapshot"],
                   row["message_index"], row["tool_call_id"], row["pin"], row["rule"], row["message"],
                   row.get("origin"))
        for table in chosen for row in table.to_pylist()
    ][:limit]
    survivor_rows = [
        SurvivorRow(records.get(row), row["operator"], row["description"], tuple(row["sites"]),
                    row["message_index"], row["reason"])
        for row in survivors.to_pylist()
    ]
    operators = tuple(
        OperatorTally(records.get(row), row["operator"], row["caught"], row["survived"])
        for row in tallies.to_pylist()
    )

    bad = pc.is_in(pairs["status"], pa.array([PairStatus.INPUT_ERROR, PairStatus.ENGINE_ERROR]))
    unjudged = [
        UnjudgedRow(records.make(row), row["status"],
                    row["engine_error"] if row["status"] == PairStatus.ENGINE_ERROR
                    else row["input_error"] or "")
        for row in pairs.filter(bad).sort_by([("source", "ascending"), ("source_row", "ascending")])
        .slice(0, limit).to_pylist()
    ]

    judged, judged_total = _judged(pairs, findings, limit)
    return RunDetails(
        findings=tuple(finding_rows),
        findings_total=findings.num_rows,
        survivors=tuple(survivor_rows),
        survivors_total=_count(survived),
        unjudged=tuple(unjudged),
        unjudged_total=_count(bad),
        judged=judged,
        judged_total=judged_total,
        operators=operators,
        operators_total=operators_total,
    )


def _read(out: str | os.PathLike[str], table: str, run_id: str, columns: list[str]) -> pa.Table:
    """The run's rows of `table` in file order, with `_part` (`log_date=…/part-….parquet`)."""
    parts = []
    for path, data in read_run_files(out, table, run_id, columns):
        name = f"{Path(path).parent.name}/{Path(path).name}"
        parts.append(data.append_column(_PART, pa.array([name] * data.num_rows, pa.string())))
    if not parts:
        empty = SCHEMAS[table].empty_table().select(columns)
        return empty.append_column(_PART, pa.array([], pa.string()))
    return pa.concat_tables(parts)


def _take(table: pa.Table, mask: Any, limit: int) -> pa.Table:
    return table.filter(mask).slice(0, limit)


def _count(mask: Any) -> int:
    return int(pc.sum(pc.cast(mask, pa.int64())).as_py() or 0)


class _Records:
    """`Record`s of the pairs table by (part file, pair_id); the first when a pair id repeats.

    Only the pairs that the chosen rows name are looked up (`need`), so a run of millions of
    pairs turns a few thousand of them into Python values.
    """

    def __init__(self, pairs: pa.Table) -> None:
        self._pairs = pairs
        self._index: dict[tuple[str, str], Record] = {}

    @staticmethod
    def make(row: dict[str, Any]) -> Record:
        return Record(row["pair_id"], row["source"], row["source_row"], row["compactor"])

    def need(self, *tables: pa.Table) -> None:
        ids = pa.concat_arrays([table["pair_id"].combine_chunks() for table in tables])
        wanted = self._pairs.filter(pc.is_in(self._pairs["pair_id"], pc.unique(ids)))
        for pair in wanted.select(["pair_id", "source", "source_row", "compactor", _PART]).to_pylist():
            self._index.setdefault((pair[_PART], pair["pair_id"]), self.make(pair))

    def get(self, row: dict[str, Any]) -> Record:
        found = self._index.get((row[_PART], row["pair_id"]))
        return found if found is not None else Record(row["pair_id"], "", 0, None)


def _judged(pairs: pa.Table, findings: pa.Table, limit: int) -> tuple[tuple[PairChecks, ...], int]:
    """Judged pairs, failing ones first, with the checks that have an error finding on each."""
    failed = _take(pairs, pc.equal(pairs["status"], PairStatus.FAIL), limit)
    passed = _take(pairs, pc.equal(pairs["status"], PairStatus.PASS), limit - failed.num_rows)
    errors = findings.filter(pc.and_(pc.equal(findings["severity"], "error"),
                                     pc.is_in(findings["pair_id"], failed["pair_id"].combine_chunks())))
    failing: dict[tuple[str, str], set[str]] = {}
    for part, pair_id, check in zip(errors[_PART].to_pylist(), errors["pair_id"].to_pylist(),
                                    errors["check"].to_pylist(), strict=True):
        failing.setdefault((part, pair_id), set()).add(check)
    total = _count(pc.is_in(pairs["status"], pa.array([PairStatus.PASS, PairStatus.FAIL])))
    return tuple(
        PairChecks(_Records.make(row), frozenset(failing.get((row[_PART], row["pair_id"]), ())))
        for table in (failed, passed) for row in table.to_pylist()
    ), total


def _tallies(mutants: pa.Table, limit: int) -> tuple[pa.Table, int]:
    """Caught and survived mutants per pair × operator (pairs with survivors first, then in
    record order), at most `limit` rows, and how many such groups there are."""
    judged = mutants.filter(pc.is_in(mutants["status"], pa.array(["caught", "survived"])))
    judged = judged.append_column("_order", pa.array(range(judged.num_rows), pa.int64()))
    judged = judged.append_column("survived", pc.cast(pc.equal(judged["status"], "survived"), pa.int64()))
    judged = judged.append_column("caught", pc.cast(pc.equal(judged["status"], "caught"), pa.int64()))
    groups = judged.group_by([_PART, "pair_id", "operator"], use_threads=False).aggregate(
        [("survived", "sum"), ("caught", "sum"), ("_order", "min")])
    groups = groups.rename_columns([name.removesuffix("_sum").removesuffix("_min")
                                    for name in groups.column_names])
    groups = groups.append_column("_quiet", pc.equal(groups["survived"], 0))
    ordered = groups.sort_by([("_quiet", "ascending"), ("_order", "ascending")])
    return ordered.slice(0, limit), groups.num_rows
