"""Corpus audit: whole logs of before/after pairs → a Parquet dataset of runs, pairs, findings and
mutants (docs/tables.md), plus the stats computed over it.

`audit(inputs, contract, out, ...)` is the Python entry point; `frayproof-audit audit` and
`frayproof-audit stats` are thin wrappers over `run_audit` and `compute_stats`. Everything is
imported on first use: the single-pair commands must not pay for Polars, pyarrow and joblib,
and every worker start pays for what this package imports.

Four rooms: `inputs/` (what a run reads: locations, expansion, shards, records, the incremental
plan), `run/` (a run: options, executor, worker, tallies, summary), `store/` (where rows go: the
table schemas, the dataset's layout, staging and commit) and `dataset/` (a committed dataset
read back: checked files, `read_table`, selection, statistics, one run's details).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from frayproof_audit.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from frayproof_audit.corpus.dataset.stats import Stats, compute_stats
    from frayproof_audit.corpus.dataset.table_reader import read_table
    from frayproof_audit.corpus.inputs.field_map import FieldMap
    from frayproof_audit.corpus.run.audit_config import AuditConfig
    from frayproof_audit.corpus.run.audit_run import Progress, audit, run_audit
    from frayproof_audit.corpus.run.summary import RunSummary

_LAZY = {
    "AuditConfig": "frayproof_audit.corpus.run.audit_config",
    "FieldMap": "frayproof_audit.corpus.inputs.field_map",
    "Progress": "frayproof_audit.corpus.run.audit_run",
    "audit": "frayproof_audit.corpus.run.audit_run",
    "run_audit": "frayproof_audit.corpus.run.audit_run",
    "RunSummary": "frayproof_audit.corpus.run.summary",
    "read_table": "frayproof_audit.corpus.dataset.table_reader",
    "Stats": "frayproof_audit.corpus.dataset.stats",
    "compute_stats": "frayproof_audit.corpus.dataset.stats",
}


__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "AuditConfig",
    "FieldMap",
    "Progress",
    "RunSummary",
    "Stats",
    "audit",
    "compute_stats",
    "read_table",
    "run_audit",
]
