"""The four output tables: explicit Arrow schemas, their file metadata, and the rows built for them.

This module is the single source of truth for column names, types and nullability; `docs/
tables.md` documents exactly these. A change here is a change of a promise to users'
warehouses: bump `TABLES_SCHEMA_VERSION` and say so in the docs.

`log_date` is not a column of any file: it is the Hive partition (`log_date=YYYY-MM-DD/`) and
readers add it from the path (Polars and DuckDB both parse it as a date).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson
import pyarrow as pa

from frayproof_audit import __version__
from frayproof_audit.database_uri import shown
from frayproof_audit.jsonio import canonical

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.corpus.run.audit_config import AuditConfig
    from frayproof_audit.corpus.run.summary import RunSummary

TABLES_SCHEMA_VERSION = 6
"""Version of the four tables' schemas, written into every file's metadata and `runs.schema_version`."""
PARTITIONED_TABLES = ("pairs", "findings", "mutants")
TABLES = ("runs", *PARTITIONED_TABLES)


_TS = pa.timestamp("us", tz="UTC")
_STRINGS = pa.list_(pa.field("item", pa.string(), nullable=False))
_CARRIED = pa.list_(pa.field("item", pa.struct([
    pa.field("name", pa.string(), nullable=False),
    pa.field("value", pa.string(), nullable=False),
]), nullable=False))
"""`pairs.carried`: the `--carry NAME=PATH` fields a record has, in the order given, as text."""


def _f(name: str, kind: pa.DataType, nullable: bool = True) -> pa.Field:
    return pa.field(name, kind, nullable=nullable)


_PAIR_KEYS = [
    _f("run_id", pa.string(), False),
    _f("pair_id", pa.string(), False),
]

PAIRS_SCHEMA = pa.schema([
    *_PAIR_KEYS,
    _f("source", pa.string(), False),
    _f("source_row", pa.int64(), False),
    _f("session_id", pa.string()),
    _f("compactor", pa.string()),
    _f("logged_at", _TS),
    _f("format", pa.string()),
    _f("status", pa.string(), False),  # a store.pair_status.PairStatus value
    _f("errors", pa.int32()),
    _f("warnings", pa.int32()),
    _f("input_error", pa.string()),
    _f("messages_before", pa.int32()),
    _f("messages_after", pa.int32()),
    _f("bytes_before", pa.int64()),
    _f("bytes_after", pa.int64()),
    _f("mutants_applicable", pa.int32()),
    _f("mutants_caught", pa.int32()),
    _f("mutants_survived", pa.int32()),
    _f("mutants_skipped", pa.int32()),
    _f("mutation_score", pa.float64()),
    _f("record_sha256", pa.string(), False),
    _f("logged_at_missing", pa.bool_()),
    _f("engine_error", pa.string()),  # schema 3: status engine_error, what was raised and where
    # schema 5: what derived the pair (`--source`) and what the log says of the compaction
    _f("source_kind", pa.string()),
    _f("fidelity", pa.string()),
    _f("event", pa.string()),
    _f("trigger", pa.string()),
    _f("tokens_before", pa.int64()),
    _f("tokens_after", pa.int64()),
    _f("classification", pa.string()),
    _f("evidence", pa.string()),
    # schema 6: error findings the compactor introduced (`blame`; null in older runs)
    _f("introduced_errors", pa.int32()),
    _f("carried", _CARRIED),  # schema 6: the --carry fields (null: the run carried none)
    _f("duplicate", pa.bool_()),  # schema 6: an earlier record of the run has this pair_id
])

FINDINGS_SCHEMA = pa.schema([
    *_PAIR_KEYS,
    _f("compactor", pa.string()),
    _f("logged_at", _TS),
    _f("check", pa.string(), False),
    _f("code", pa.string()),
    _f("severity", pa.string(), False),
    _f("snapshot", pa.string(), False),
    _f("message_index", pa.int32()),
    _f("tool_call_id", pa.string()),
    _f("pin", pa.string()),
    _f("rule", pa.string()),
    _f("message", pa.string(), False),
    _f("repairable", pa.bool_()),  # schema 4: a transcript repair removes this finding
    _f("origin", pa.string()),  # schema 6: introduced or inherited (`blame`; null in older runs)
    _f("duplicate", pa.bool_()),  # schema 6: the finding of a pair's repeated record
])

MUTANTS_SCHEMA = pa.schema([
    *_PAIR_KEYS,
    _f("compactor", pa.string()),
    _f("logged_at", _TS),
    _f("operator", pa.string(), False),
    _f("description", pa.string()),
    _f("message_index", pa.int32()),
    _f("sites", _STRINGS, False),
    _f("status", pa.string(), False),
    _f("caught_by", _STRINGS, False),
    _f("reason", pa.string()),
    _f("duplicate", pa.bool_()),  # schema 6: the mutant of a pair's repeated record
])

RUNS_SCHEMA = pa.schema([
    _f("run_id", pa.string(), False),
    _f("schema_version", pa.int32(), False),
    _f("tool_version", pa.string(), False),
    _f("started_at", _TS, False),
    _f("finished_at", _TS, False),
    _f("duration_s", pa.float64(), False),
    _f("contract_path", pa.string()),
    _f("contract_sha256", pa.string(), False),
    _f("contract_text", pa.string(), False),
    _f("inputs", _STRINGS, False),
    _f("argv", _STRINGS, False),
    _f("options", pa.string(), False),
    _f("backend", pa.string(), False),
    _f("n_jobs", pa.int32(), False),
    _f("shards", pa.int32(), False),
    _f("pairs", pa.int64(), False),
    _f("passed", pa.int64(), False),
    _f("failed", pa.int64(), False),
    _f("input_errors", pa.int64(), False),
    _f("not_audited_shards", _STRINGS, False),
    _f("not_audited_records", pa.int64()),
    _f("mutants_caught", pa.int64(), False),
    _f("mutants_survived", pa.int64(), False),
    _f("mutants_skipped", pa.int64(), False),
    _f("files", _STRINGS, False),
    _f("engine_errors", pa.int64(), False),  # schema 3
    _f("contract_fingerprint", pa.string()),  # schema 4 (null in older runs)
    _f("sources", pa.string()),  # schema 4: the inputs an --incremental run audited (JSON)
    _f("source_counts", pa.string()),  # schema 5: files, lines and events per source (JSON)
    _f("status", pa.string()),  # schema 5: a RunStatus value (null in older runs: `run_status`)
    _f("rejudge_of", pa.string()),  # schema 5: the run whose inputs this one judged again
])

SCHEMAS: Mapping[str, pa.Schema] = {
    "runs": RUNS_SCHEMA,
    "pairs": PAIRS_SCHEMA,
    "findings": FINDINGS_SCHEMA,
    "mutants": MUTANTS_SCHEMA,
}

ADDED_IN: Mapping[str, Mapping[str, int]] = {
    "runs": {"engine_errors": 3, "contract_fingerprint": 4, "sources": 4, "source_counts": 5,
             "status": 5, "rejudge_of": 5},
    "pairs": {"logged_at_missing": 2, "engine_error": 3, "source_kind": 5, "fidelity": 5,
              "event": 5, "trigger": 5, "tokens_before": 5, "tokens_after": 5,
              "classification": 5, "evidence": 5, "introduced_errors": 6, "carried": 6,
              "duplicate": 6},
    "findings": {"code": 2, "repairable": 4, "origin": 6, "duplicate": 6},
    "mutants": {"duplicate": 6},
}
"""Columns added since schema 1, with the version that added them (docs/tables.md, Changelog):
a file of an older version lacks them, a file of that version or later has them."""


def schema_of(table: str, version: int) -> pa.Schema:
    """The columns of `table` in a file written with tables schema `version` (1 to today's)."""
    added = ADDED_IN[table]
    return pa.schema([field for field in SCHEMAS[table] if added.get(field.name, 1) <= version])

META_SCHEMA_VERSION = "frayproof_audit.schema_version"
META_VERSION = "frayproof_audit.version"
META_TABLE = "frayproof_audit.table"
META_RUN_ID = "run_id"
META_CONTRACT = "contract_sha256"


def file_metadata(table: str, run_id: str, contract_sha256: str) -> dict[str, str]:
    """Schema-level key/value metadata written into every file's footer."""
    return {
        META_SCHEMA_VERSION: str(TABLES_SCHEMA_VERSION),
        META_VERSION: __version__,
        META_TABLE: table,
        META_RUN_ID: run_id,
        META_CONTRACT: contract_sha256,
    }


class TableBuilder:
    """Column lists for one table, filled row by row, turned into Arrow once per shard.

    Column-wise lists are several times cheaper than a dict per row, and `from_arrays` with the
    explicit schema rejects any value of the wrong type, so a worker can never write a file
    that disagrees with the documented schema.
    """

    __slots__ = ("_columns", "_lists", "_names", "log_dates", "schema")

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self._columns: dict[str, list[Any]] = {name: [] for name in schema.names}
        self._names = tuple(self._columns)
        self._lists = tuple(self._columns.values())
        self.log_dates: list[str] = []

    def __len__(self) -> int:
        return len(self.log_dates)

    def append(self, log_date: str, row: Mapping[str, Any]) -> None:
        # One C-level pass: each column list appends the row's value (None when absent).
        deque(map(list.append, self._lists, map(row.get, self._names)), maxlen=0)
        self.log_dates.append(log_date)

    def by_log_date(self) -> dict[str, pa.Table]:
        """The rows as one Arrow table per `log_date`, each in insertion (record) order."""
        if not self.log_dates:
            return {}
        arrays = [_array(self._columns[field.name], field.type) for field in self.schema]
        table = pa.Table.from_arrays(arrays, schema=self.schema)
        dates = sorted(set(self.log_dates))
        if len(dates) == 1:
            return {dates[0]: table}
        import pyarrow.compute as pc  # only for multi-night shards; its import is ~40 ms

        keys = pa.array(self.log_dates, type=pa.string())
        return {date: table.filter(pc.equal(keys, date)) for date in dates}


def _array(values: list[Any], kind: pa.DataType) -> pa.Array:
    """One column; a string no UTF-8 file can hold (a lone surrogate) gets U+FFFD instead.

    Inputs are checked long before this, so the retry is a last line of defence that costs
    nothing when every value is fine: one odd character must never lose a whole shard.
    """
    try:
        return pa.array(values, type=kind)
    except UnicodeEncodeError:
        return pa.array(_replace_surrogates(values), type=kind)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replace_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {key: _replace_surrogates(item) for key, item in value.items()}
    return value


def empty(name: str) -> pa.Table:
    return SCHEMAS[name].empty_table()


def runs_row(
    config: AuditConfig,
    summary: RunSummary,
    contract: Contract,
    started: datetime,
    finished: datetime,
    n_jobs: int,
    files: list[str],
    sources: list[dict[str, Any]] | None = None,
    rejudge_of: str | None = None,
) -> pa.Table:
    """The one-row `runs` table that commits a run: what ran, with what, and which files it
    wrote; `rejudge_of` names the run whose inputs a `rejudge` run judged again."""
    missing = [item.records for item in summary.not_audited]
    row = {
        "run_id": summary.run_id,
        "schema_version": TABLES_SCHEMA_VERSION,
        "tool_version": __version__,
        "started_at": started,
        "finished_at": finished,
        "duration_s": summary.duration_s,
        "contract_path": config.contract,
        "contract_sha256": contract.sha256,
        "contract_text": contract.source_text,
        "contract_fingerprint": contract.fingerprint,
        # a database URI's password is never stored (`database_uri`)
        "inputs": [shown(given) for given in config.inputs],
        "argv": [shown(arg) for arg in config.argv],
        "options": canonical(config.options()).decode(),  # bounded at parse time; exact anyway
        "backend": config.backend,
        "n_jobs": n_jobs,
        "shards": summary.shards,
        "pairs": summary.pairs,
        "passed": summary.passed,
        "failed": summary.failed,
        "input_errors": summary.input_errors,
        "not_audited_shards": [item.shard for item in summary.not_audited],
        "not_audited_records": None if None in missing else sum(m or 0 for m in missing),
        "mutants_caught": summary.mutants_caught,
        "mutants_survived": summary.mutants_survived,
        "mutants_skipped": summary.mutants_skipped,
        "files": sorted(files),
        "engine_errors": summary.engine_errors,
        "sources": None if sources is None else orjson.dumps(sources).decode(),
        "source_counts": orjson.dumps({line.source: line.to_dict()
                                       for line in summary.sources}).decode(),
        "status": summary.status,
        "rejudge_of": rejudge_of,
    }
    try:
        return pa.Table.from_pylist([row], schema=RUNS_SCHEMA)
    except UnicodeEncodeError:  # an argument that is not UTF-8 (a file name): see `_array`
        return pa.Table.from_pylist([_replace_surrogates(row)], schema=RUNS_SCHEMA)
