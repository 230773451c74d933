"""`rejudge(config)`: the stored history of a dataset judged again with a new contract.

A team that tightens its contract would otherwise start its trend again from that night:
`stats`, `trend` and `report` never add up runs of different contracts. Rejudging re-audits
every committed audit run of the dataset with the new contract, from the inputs that run
recorded, so the history reads as if the new contract had judged it all along.

How a rejudged run is identified and stored:

* It is a new run, `<original run id>.<first 12 digits of the new contract's fingerprint>`
  (a run id too long for that keeps its first 102 characters and a hash of the rest), with
  `runs.rejudge_of` naming the original. Re-running `rejudge` with the same contract replaces
  it, as a re-run of any run id does. The original stays, under its own contract: choose it
  with `--contract FINGERPRINT`, or delete it with `runs --delete`.
* It reads exactly the files the original's `pairs` rows name (the original's inputs,
  expanded again, filtered to them) and, for an `--incremental` original, exactly the ranges
  its `runs.sources` lists, which it records again, so the next `--incremental` night under the
  new contract skips what was rejudged. Every option that shapes results (field map, input
  format, mutation, operators, budgets, record and shard sizes) is the original's, read from
  `runs.options`.
* Records without a usable `logged_at` are filed under the original run's date, not today's:
  every row lands in the `log_date` partition the original's did.
* Before it commits, it compares what it read with what the original read (each record's
  source, row and SHA-256): an input that is gone, or whose records changed since, is named
  and that run is not rejudged (nothing of it is committed); the other runs are.

Relative input paths are read from the current folder, as the original audit read them: run
`rejudge` from the folder the audits ran in (or audit with absolute paths, as cron jobs do).
Failed runs (no record could be checked) and runs already judged by the new contract are
skipped, and so is an original whose rejudged copy is newer than it.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import polars as pl

from frayproof_audit.contract import load_contract
from frayproof_audit.corpus.dataset.selection import run_infos, short
from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.corpus.inputs.field_map import ConfigError, FieldMap
from frayproof_audit.corpus.inputs.shard_plan import Span
from frayproof_audit.corpus.run.audit_config import (
    DEFAULT_MAX_RECORD_BYTES,
    DEFAULT_SHARD_BYTES,
    AuditConfig,
    check_run_id,
)
from frayproof_audit.corpus.run.audit_run import Replay, ReplayMismatch, run_audit
from frayproof_audit.corpus.run.rate_gates import DEFAULT_MIN_PAIRS, FailureRateGate, parse_failure_rate
from frayproof_audit.corpus.run.summary import RunSummary
from frayproof_audit.corpus.store.failure_rule import DEFAULT_BLAME
from frayproof_audit.corpus.store.local_stage import Stage
from frayproof_audit.corpus.store.object_stage import ObjectStage
from frayproof_audit.corpus.store.run_status import RunStatus
from frayproof_audit.errors import InputError
from frayproof_audit.report import EXIT_INPUT_ERROR, EXIT_PASS

_MAX_RUN_ID = 128
_KEY_DIGITS = 12
_RECORD = ("source", "source_row", "record_sha256")
_RUNS = ("run_id", "started_at", "contract_fingerprint", "contract_sha256", "contract_text",
         "schema_version", "status", "pairs", "passed", "failed", "rejudge_of", "inputs", "options",
         "sources")


def rejudged_id(original: str, fingerprint: str) -> str:
    """The run id of `original` judged again by the contract of `fingerprint`."""
    key = fingerprint.removeprefix("sha256:")[:_KEY_DIGITS]
    run_id = f"{original}.{key}"
    if len(run_id) > _MAX_RUN_ID:
        digest = hashlib.sha256(original.encode("utf-8")).hexdigest()[:_KEY_DIGITS]
        run_id = f"{original[:_MAX_RUN_ID - 2 * _KEY_DIGITS - 2]}.{digest}.{key}"
    return check_run_id(run_id)


@dataclass(frozen=True, slots=True)
class RejudgeConfig:
    """What `rejudge` is asked: the dataset, the new contract file, which runs, how to run."""

    out: str
    contract: str
    runs: tuple[str, ...] = ()
    """Only these original runs (default: every committed audit run)."""
    n_jobs: int = -1
    backend: str = "loky"
    argv: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Rejudged:
    """An original run and the run that judged it again."""

    original: str
    run_id: str
    summary: RunSummary
    failed_before: int
    """The original's failing pairs, for comparison."""


@dataclass(frozen=True, slots=True)
class Left:
    """An original run that was not rejudged, and why."""

    run_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class RejudgeResult:
    """What `rejudge` did; owns the exit code (2 when a run could not be rejudged)."""

    out: str
    contract_path: str
    fingerprint: str
    rejudged: tuple[Rejudged, ...] = ()
    skipped: tuple[Left, ...] = ()
    """Runs with nothing to judge again: failed, already judged by the contract, or rejudged."""
    not_rejudged: tuple[Left, ...] = ()
    """Runs whose inputs are gone or changed: nothing of them was committed."""

    @property
    def exit_code(self) -> int:
        return EXIT_INPUT_ERROR if self.not_rejudged else EXIT_PASS

    def to_text(self) -> str:
        lines = [f"Rejudged {len(self.rejudged)} run(s) of '{self.out}' with contract"
                 f" {short(self.fingerprint)} ({self.contract_path})" + (":" if self.rejudged else ".")]
        for item in self.rejudged:
            summary = item.summary
            lines.append(f"  {item.original} -> {item.run_id}: {summary.pairs:,} pairs,"
                         f" {summary.failed:,} failed (was {item.failed_before:,}),"
                         f" {summary.input_errors:,} input errors")
        if self.skipped:
            lines.append(f"Skipped {len(self.skipped)} run(s):")
            lines += [f"  {item.run_id}: {item.reason}" for item in self.skipped]
        if self.not_rejudged:
            lines.append(f"Could not rejudge {len(self.not_rejudged)} run(s) (nothing of them was"
                         " committed):")
            lines += [f"  {item.run_id}: {item.reason}" for item in self.not_rejudged]
        if self.rejudged:
            lines.append("stats, trend and report now count the rejudged runs (the newest contract);"
                         " the originals stay under their own contract (--contract FINGERPRINT)"
                         " until `runs --delete` removes them.")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "contract": self.fingerprint,
            "contract_path": self.contract_path,
            "rejudged": [{"run_id": item.run_id, "rejudge_of": item.original,
                          "pairs": item.summary.pairs, "passed": item.summary.passed,
                          "failed": item.summary.failed, "input_errors": item.summary.input_errors,
                          "failed_before": item.failed_before} for item in self.rejudged],
            "skipped": [{"run_id": item.run_id, "reason": item.reason} for item in self.skipped],
            "not_rejudged": [{"run_id": item.run_id, "reason": item.reason}
                             for item in self.not_rejudged],
            "exit_code": self.exit_code,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)


OnRun = Callable[[str, str], None]
"""Called with (original run id, rejudged run id) before each replay: progress for people."""


def rejudge(config: RejudgeConfig, on_run: OnRun | None = None) -> RejudgeResult:
    """Judge the committed audit runs of `config.out` again with `config.contract` (see the
    module docstring). Raises `InputError` for a bad contract, dataset or run name, before any
    work; a run whose inputs are gone or changed is reported, not raised."""
    contract = load_contract(config.contract)
    fingerprint = contract.fingerprint
    rows = read_table(config.out, "runs").select(*_RUNS).sort("started_at", "run_id").collect()
    infos = {info.run_id: info for info in run_infos(rows)}
    originals = [row for row in rows.iter_rows(named=True) if row["rejudge_of"] is None]
    names = {row["run_id"] for row in originals}
    for asked in config.runs:
        if asked not in names:
            what = (f"a rejudged run (of {infos[asked].rejudge_of}): name its original"
                    if asked in infos else "not a committed run")
            raise ConfigError(f"--run {asked!r} in '{config.out}' is {what}")
    done: list[Rejudged] = []
    skipped: list[Left] = []
    failed: list[Left] = []
    for row in originals:
        run_id = row["run_id"]
        if config.runs and run_id not in config.runs:
            continue
        info = infos[run_id]
        target = rejudged_id(run_id, fingerprint)
        copy = infos.get(target)
        if info.status is RunStatus.FAILED:
            skipped.append(Left(run_id, "failed: no record of it could be checked"))
        elif info.contract == fingerprint:
            skipped.append(Left(run_id, "already judged by this contract"))
        elif copy is not None and copy.rejudge_of == run_id and copy.started_at > info.started_at:
            skipped.append(Left(run_id, f"already rejudged with this contract, as {target}"))
        else:
            if on_run is not None:
                on_run(run_id, target)
            try:
                summary = _replay(config, row, target)
            except InputError as exc:
                failed.append(Left(run_id, str(exc)))
            else:
                if summary is None:
                    skipped.append(Left(run_id, "it holds no record"))
                else:
                    done.append(Rejudged(run_id, target, summary, row["failed"]))
    return RejudgeResult(config.out, config.contract, fingerprint, tuple(done), tuple(skipped),
                         tuple(failed))


def _replay(config: RejudgeConfig, row: dict[str, Any], target: str) -> RunSummary | None:
    """Audit `row`'s run again into `target`; None when it read no record."""
    run_id = row["run_id"]
    records = (read_table(config.out, "pairs").filter(pl.col("run_id") == run_id)
               .select(*_RECORD).collect())
    if records.height == 0:
        return None
    expected = Counter(records.iter_rows())
    options: dict[str, Any] = json.loads(row["options"])
    recorded = json.loads(row["sources"]) if row["sources"] else None
    replay = Replay(
        of=run_id,
        run_date=row["started_at"].date().isoformat(),
        sources=frozenset(records["source"].to_list()),
        spans=_spans(recorded) if recorded is not None else None,
        recorded_sources=recorded,
        check=lambda stage: _same_records(stage, expected, run_id),
    )
    operators = options.get("operators")
    audit_config = AuditConfig(
        inputs=tuple(row["inputs"]),
        out=config.out,
        contract=config.contract,
        n_jobs=config.n_jobs,
        backend=config.backend,
        run_id=target,
        fields=FieldMap().with_specs(dict(options.get("fields") or {})).with_carry(
            dict(options.get("carry") or {})),
        mutate=bool(options.get("mutate", True)),
        operators=tuple(operators) if operators else None,
        input_format=options.get("input_format"),
        max_record_bytes=int(options.get("max_record_bytes", DEFAULT_MAX_RECORD_BYTES)),
        shard_bytes=int(options.get("shard_bytes", DEFAULT_SHARD_BYTES)),
        fail_on=tuple(options.get("fail_on") or ("failures",)),
        max_failure_rate=options.get("max_failure_rate"),
        failure_rate_gates=tuple(
            gate for gate in map(parse_failure_rate, options.get("failure_rate_gates") or ())
            if isinstance(gate, FailureRateGate)),
        min_pairs=int(options.get("min_pairs", DEFAULT_MIN_PAIRS)),
        strict_min_pairs=bool(options.get("strict_min_pairs", False)),
        blame=str(options.get("blame") or DEFAULT_BLAME),
        max_input_error_rate=options.get("max_input_error_rate"),
        allow_engine_errors=bool(options.get("allow_engine_errors", False)),
        strict_fields=bool(options.get("strict_fields", False)),
        max_mutants_per_pair=options.get("max_mutants_per_pair"),
        argv=config.argv,
    )
    return run_audit(audit_config, replay=replay)


def _spans(recorded: list[dict[str, Any]]) -> dict[str, tuple[Span, ...]]:
    """An incremental run's `runs.sources` ranges, by path, in file order."""
    spans: dict[str, list[Span]] = {}
    for entry in recorded:
        spans.setdefault(entry["path"], []).append(Span(
            int(entry.get("start_offset") or 0), int(entry.get("start_line") or 0),
            entry.get("resume_offset"), entry.get("resume_line")))
    return {path: tuple(sorted(found, key=lambda span: span.start)) for path, found in spans.items()}


def _same_records(stage: Stage | ObjectStage, expected: Counter[tuple[Any, ...]], run_id: str) -> None:
    """`ReplayMismatch` naming the files whose records differ from what run `run_id` read."""
    staged = stage.read_staged("pairs", list(_RECORD)).to_pylist()
    found = Counter(tuple(row[name] for name in _RECORD) for row in staged)
    if found == expected:
        return
    differ = sorted({key[0] for key in (found - expected) + (expected - found)})
    shown = ", ".join(differ[:5]) + (f" and {len(differ) - 5} more" if len(differ) > 5 else "")
    raise ReplayMismatch(f"the records of {len(differ)} input file(s) changed since run {run_id}"
                         f" read them ({sum(expected.values()):,} records then,"
                         f" {sum(found.values()):,} now): {shown}")

