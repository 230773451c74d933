"""The frozen options of one audit run (`AuditConfig`); the field mapping is `inputs/field_map.py`.

Everything a run needs is decided here, before any work: a bad option is an `InputError` (exit 2)
raised by the parent, never a surprise inside a worker halfway through a night of logs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

from frayproof_audit.bounds import MAX_BYTES, MAX_COUNT
from frayproof_audit.corpus.inputs import location
from frayproof_audit.corpus.inputs.field_map import ConfigError, FieldMap
from frayproof_audit.corpus.inputs.source_choice import AUTO, PAIRS, check_source
from frayproof_audit.corpus.run.rate_gates import DEFAULT_MIN_PAIRS, FailureRateGate
from frayproof_audit.corpus.store.failure_rule import BLAMES, DEFAULT_BLAME
from frayproof_audit.formats import FORMATS
from frayproof_audit.jsonio import is_unicode_text

BACKENDS = ("loky", "threading", "dask", "ray")
CLUSTER_BACKENDS = ("dask", "ray")
"""Backends that run on a cluster (`--scheduler`); the others run on this machine."""
FAIL_ON = ("failures", "survivors", "input-errors", "none")
STATS_BY = ("compactor", "log_date", "run_id")
"""Columns `stats --by` can group on (kept here so the CLI need not import Polars to list them)."""
DEFAULT_SHARD_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_INPUT_ERROR_RATE = 0.5
"""Input errors / records above this fail the run. A safety net against an audit that did not
see the log it was pointed at (a wrong field map, gzip bytes in a `.jsonl`: all or most records
bad), loose enough that the truncated last line of a live log, even one per small file, never
trips it. Stricter nightly jobs set a lower rate, or `--fail-on input-errors` (any)."""
DEFAULT_MAX_MUTANTS_PER_PAIR = 2000
"""Mutation sites judged per pair at most (`mutate.budget`; None: all). Generous: a typical
compacted session (tens to a few hundred messages, under ~1,000 sites) is judged in full, exactly
as without a budget, while a record of hundreds of thousands of messages costs about a second and
2,000 mutant rows instead of minutes and a million rows."""
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """What a run does, however it is started: the options `AuditConfig` (what the CLI builds)
    and `audit()` (the library's keywords, `audit_run.AuditKeywords`) share, each written here
    once with its type and default. `AuditConfig` checks them."""

    backend: str = "loky"
    run_id: str | None = None
    mutate: bool = True
    operators: tuple[str, ...] | None = None
    input_format: str | None = None
    """Wire format of records without a `format` field (default: the contract's `format`)."""
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    shard_bytes: int = DEFAULT_SHARD_BYTES
    fail_on: tuple[str, ...] = ("failures",)
    max_failure_rate: float | None = None
    """The whole run's failed / checked pairs may not exceed this (None: any failure fails,
    unless `failure_rate_gates` are given)."""
    failure_rate_gates: tuple[FailureRateGate, ...] = ()
    """Per-check and per-compactor failure-rate gates (`rate_gates`); with any of them (or
    `max_failure_rate`), rates decide and a failing pair alone no longer fails the run."""
    min_pairs: int = DEFAULT_MIN_PAIRS
    """Checked pairs a compactor needs before its own gate judges it."""
    strict_min_pairs: bool = False
    """A compactor gate with fewer than `min_pairs` pairs fails the run instead of not judging."""
    baseline_findings: str | None = None
    """A known-issue baseline file (`baseline_file`): the error findings it lists (pair id ×
    condition code) are stored and counted, but fail no gate."""
    blame: str = DEFAULT_BLAME
    """Which failing pairs the failure gates count (`corpus.store.failure_rule`): `introduced`, those whose
    compactor introduced an error, or `all`, frayproof's reading."""
    argv: tuple[str, ...] = ()
    max_input_error_rate: float | None = DEFAULT_MAX_INPUT_ERROR_RATE
    """Input errors / records above this fail the run (None: never; `fail_on` input-errors: any)."""
    allow_engine_errors: bool = False
    """Records whose audit raised (a bug) do not fail the run; by default any one does."""
    max_mutants_per_pair: int | None = DEFAULT_MAX_MUTANTS_PER_PAIR
    """Mutation sites judged per pair at most, sampled (None: every site)."""
    repair_out: str | None = None
    """Folder for the repaired after snapshots of failing pairs a repair fixes (None: none)."""
    scheduler: str | None = None
    """Dask or Ray cluster to run on (`tcp://HOST:PORT`, a Ray address) or `local` (the default
    for those backends: a cluster of `n_jobs` workers on this machine, started for the run)."""
    incremental: bool = False
    """Audit only what no other committed run with the same contract fingerprint audited
    (`corpus/inputs/incremental_plan.py`): the run of this run id, which this one replaces, never counts."""
    strict_fields: bool = False
    """A mapped field (`--field`/`--config`) found in fewer than half the records read is an
    input error (exit 2, the run committed failed) instead of a warning (`field_watch`)."""
    source: str = "auto"
    """What reads the inputs (`corpus/inputs/source_choice.py`): `pairs` (records of the audit's
    own shape), a registered source (agents' session files, checkpoint databases, request
    logs: each compaction a pair), or `auto`, decided per file by its evidence."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditConfig(RunOptions):
    """Every option of one audit run: the `RunOptions`, and the inputs, OUT, the contract, the
    number of jobs and the field mapping. Build it, call `run_audit(config)`; nothing else is
    read."""

    inputs: tuple[str, ...]
    out: str
    contract: str | None = None
    n_jobs: int = -1
    fields: FieldMap = field(default_factory=FieldMap)

    def __post_init__(self) -> None:
        if not self.inputs:
            raise ConfigError("no inputs: give at least one file, folder or glob")
        if self.backend not in BACKENDS:
            raise ConfigError(f"unknown backend {self.backend!r} (choose {', '.join(BACKENDS)})")
        if self.scheduler is not None and self.backend not in CLUSTER_BACKENDS:
            raise ConfigError(f"--scheduler needs --backend {' or '.join(CLUSTER_BACKENDS)}"
                              f" (not {self.backend})")
        if self.scheduler is not None and (not self.scheduler or not is_unicode_text(self.scheduler)):
            raise ConfigError("--scheduler must be an address (tcp://HOST:PORT) or 'local'")
        if self.n_jobs == 0 or self.n_jobs < -1 or self.n_jobs > MAX_COUNT:
            raise ConfigError(f"jobs must be a number from 1 to {MAX_COUNT}, or -1 for all cores")
        if self.run_id is not None:
            check_run_id(self.run_id)
        for name in ("max_record_bytes", "shard_bytes"):
            if not 1 <= getattr(self, name) <= MAX_BYTES:
                raise ConfigError(f"{name} must be from 1 to {MAX_BYTES} (1 TiB)")
        for gate in self.fail_on:
            if gate not in FAIL_ON:
                raise ConfigError(f"unknown --fail-on {gate!r} (choose {', '.join(FAIL_ON)})")
        if "none" in self.fail_on and len(self.fail_on) > 1:
            raise ConfigError("--fail-on none cannot be combined with other gates")
        rate = self.max_failure_rate
        if rate is not None and not 0.0 <= rate <= 1.0:
            raise ConfigError("--max-failure-rate must be between 0 and 1")
        for rate_gate in self.failure_rate_gates:
            if not isinstance(rate_gate, FailureRateGate):
                raise ConfigError("failure_rate_gates holds FailureRateGate values"
                                  f" (parse_failure_rate('retention=0.05')), not {rate_gate!r}")
        if type(self.min_pairs) is not int or not 1 <= self.min_pairs <= MAX_COUNT:
            raise ConfigError(f"--min-pairs must be an integer from 1 to {MAX_COUNT}")
        if self.baseline_findings is not None and not self.baseline_findings:
            raise ConfigError("--baseline-findings needs a file name")
        if self.blame not in BLAMES:
            raise ConfigError(f"unknown --blame {self.blame!r} (choose {', '.join(BLAMES)})")
        rate = self.max_input_error_rate
        if rate is not None and not 0.0 <= rate <= 1.0:
            raise ConfigError("--max-input-error-rate must be between 0 and 1")
        budget = self.max_mutants_per_pair
        if budget is not None and (type(budget) is not int or not 1 <= budget <= MAX_COUNT):
            raise ConfigError(f"--max-mutants-per-pair must be an integer from 1 to {MAX_COUNT}"
                              " (0 on the command line: no budget)")
        if self.operators is not None and not self.operators:
            raise ConfigError("--operators needs at least one operator name")
        if self.input_format is not None and self.input_format not in FORMATS:
            raise ConfigError(f"unknown --input-format {self.input_format!r}"
                              f" (choose {', '.join(FORMATS)})")
        _repair_folder(self.repair_out)  # a URI is refused before any work
        check_source(self.source)
        if self.source not in (AUTO, PAIRS):
            if self.fields != FieldMap():
                raise ConfigError(f"--field, --carry and a config file: map the fields of pair "
                                  f"records only (--source pairs or auto), not of {self.source} "
                                  "files, whose pairs a source derives")
            if self.input_format is not None:
                raise ConfigError(f"--input-format names the format of pair records only (--source"
                                  f" pairs or auto); {self.source} files are in the format their "
                                  "source says")

    @property
    def repair_folder(self) -> str | None:
        """The local folder `--repair-out` names (a `file://` URI is its path), or None."""
        return _repair_folder(self.repair_out)

    def options(self) -> dict[str, Any]:
        """The options that shape the result, for the `runs` table (paths and argv excluded)."""
        skip = {"inputs", "out", "contract", "argv", "fields", "repair_out", "scheduler",
                "baseline_findings"}
        found = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}
        found["fields"] = dict(self.fields.items())
        found["carry"] = dict(self.fields.carry)
        found["operators"] = list(self.operators) if self.operators is not None else None
        found["fail_on"] = list(self.fail_on)
        found["failure_rate_gates"] = [gate.spec for gate in self.failure_rate_gates]
        found["blame"] = str(self.blame)
        return found


def _repair_folder(repair_out: str | None) -> str | None:
    if repair_out is None:
        return None
    try:
        folder = location.local_path(repair_out)
    except location.LocationError as exc:
        raise ConfigError(f"--repair-out {exc}") from None
    if folder is None:
        raise ConfigError(f"--repair-out '{repair_out}' is a URI: repaired snapshots are written to"
                          f" a local folder (for a local folder of that name, write ./{repair_out})")
    if not folder:
        raise ConfigError("--repair-out needs a folder name")
    return folder


def check_run_id(run_id: str) -> str:
    """Run ids become file names, so they are restricted to a safe, portable alphabet."""
    if not _RUN_ID.fullmatch(run_id):
        raise ConfigError(
            f"run id {run_id!r} must be 1-128 characters of letters, digits, '.', '_' or '-',"
            " starting with a letter or digit"
        )
    return run_id
