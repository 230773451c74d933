"""`run_audit(config)`: plan → fan out → stage → commit, and the `RunSummary` of it all.

The parent process reads the contract once, expands and plans the inputs, and from then on only
ships shard descriptors and collects small results (the part files a worker staged, its totals):
it never holds a record or a row. Everything that can be wrong with the options, the contract or
an input path is found before the first shard runs.

A run stops early only for what makes its result worthless: a staging folder or OUT that cannot
be written (a full disk: `StoreError`, exit 2), Ctrl-C or SIGTERM (`KeyboardInterrupt` from the
CLI's handler). Either way the workers are stopped, the staging folder removed and the lock
released before the exception leaves `run_audit`; nothing is committed.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime

from frayproof_audit.contract import Contract, load_contract
from frayproof_audit.corpus.config import (
    DEFAULT_MAX_INPUT_ERROR_RATE,
    DEFAULT_MAX_MUTANTS_PER_PAIR,
    DEFAULT_MAX_RECORD_BYTES,
    DEFAULT_SHARD_BYTES,
    AuditConfig,
    ConfigError,
    FieldMap,
)
from frayproof_audit.corpus.executor import WorkerDied, effective_jobs, run_tasks
from frayproof_audit.corpus.shards import Shard, plan
from frayproof_audit.corpus.sources import expand_sources
from frayproof_audit.corpus.store import Stage, StoreError, local_folder
from frayproof_audit.corpus.summary import NotAudited, RunSummary
from frayproof_audit.corpus.tables import file_metadata, runs_row
from frayproof_audit.corpus.tally import MAX_SAMPLES, Tally
from frayproof_audit.corpus.worker import ShardResult, ShardTask, WorkerSettings, audit_shard


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a run is: shards and records done, and input weight (bytes) done of the total."""

    shards_done: int
    shards_total: int
    records: int
    weight_done: int
    weight_total: int
    elapsed_s: float


ProgressCallback = Callable[[Progress], None]


def audit(
    inputs: str | Sequence[str],
    contract: str | None,
    out: str,
    *,
    jobs: int = -1,
    backend: str = "loky",
    run_id: str | None = None,
    fields: dict[str, str] | FieldMap | None = None,
    mutate: bool = True,
    operators: Sequence[str] | None = None,
    input_format: str | None = None,
    fail_on: Sequence[str] = ("failures",),
    max_failure_rate: float | None = None,
    max_input_error_rate: float | None = DEFAULT_MAX_INPUT_ERROR_RATE,
    allow_engine_errors: bool = False,
    max_mutants_per_pair: int | None = DEFAULT_MAX_MUTANTS_PER_PAIR,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    shard_bytes: int = DEFAULT_SHARD_BYTES,
    argv: Sequence[str] = (),
    progress: ProgressCallback | None = None,
) -> RunSummary:
    """Audit JSONL/Parquet logs of before/after pairs into the Parquet dataset at `out`.

    The keywords are `AuditConfig`'s fields (`jobs` is its `n_jobs`); `fields` maps field names
    to dotted paths. Raises `InputError` (a bad contract, option or input path) before any work.
    """
    field_map = fields if isinstance(fields, FieldMap) else FieldMap().with_specs(dict(fields or {}))
    config = AuditConfig(
        inputs=(inputs,) if isinstance(inputs, str) else tuple(inputs),
        out=out,
        contract=contract,
        n_jobs=jobs,
        backend=backend,
        run_id=run_id,
        fields=field_map,
        mutate=mutate,
        operators=tuple(operators) if operators is not None else None,
        input_format=input_format,
        fail_on=tuple(fail_on),
        max_failure_rate=max_failure_rate,
        max_record_bytes=max_record_bytes,
        shard_bytes=shard_bytes,
        argv=tuple(argv),
        max_input_error_rate=max_input_error_rate,
        allow_engine_errors=allow_engine_errors,
        max_mutants_per_pair=max_mutants_per_pair,
    )
    return run_audit(config, progress)


def new_run_id(now: datetime | None = None) -> str:
    """The default run id: `YYYYMMDDTHHMMSSZ-<6 hex>` (UTC)."""
    return f"{now or datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"


def run_audit(config: AuditConfig, progress: ProgressCallback | None = None) -> RunSummary:
    """Run one audit as configured; the `RunSummary` owns the exit code."""
    started = datetime.now(UTC)
    clock = time.perf_counter()
    run_id = config.run_id or new_run_id(started)
    local_folder(config.out)  # a URI is refused before anything is read or created
    contract = load_contract(config.contract)
    if config.mutate:
        _check_mutation(config.operators)
    expanded = expand_sources(config.inputs, config.out)
    shards = plan(expanded.sources, config.shard_bytes)
    stage = Stage(config.out, run_id)
    try:
        run_date = started.date().isoformat()
        settings = WorkerSettings(
            run_id=run_id,
            run_date=run_date,
            contract=contract,
            fields=config.fields,
            mutate=config.mutate,
            operators=config.operators,
            input_format=config.input_format or contract.format,
            max_record_bytes=config.max_record_bytes,
            staging_dir=str(stage.folder),
            inflight_dir=str(stage.inflight),
            max_mutants=config.max_mutants_per_pair,
            repair_out=config.repair_out,
        )
        collector = _Collector(stage, shards, contract, run_id, progress, clock)
        _execute(shards, settings, config, collector)
        stage.fill_empty_tables(run_date, collector.meta)
        finished = datetime.now(UTC)
        note = expanded.note()
        summary = collector.summary(config, started, finished, time.perf_counter() - clock,
                                    notes=(note,) if note else ())
        row = runs_row(config, summary, contract, started, finished, _jobs(config, shards), stage.staged)
        stage.commit(row, file_metadata("runs", run_id, contract.sha256))
    except BaseException:
        stage.close()
        raise
    return summary


def _check_mutation(operators: tuple[str, ...] | None) -> None:
    from frayproof_audit.mutate import OPERATORS  # only runs that mutate pay for this import

    unknown = [name for name in operators or () if name not in OPERATORS]
    if unknown:
        raise ConfigError(f"unknown operator(s) {', '.join(unknown)} (known: {', '.join(OPERATORS)})")


def _execute(
    shards: tuple[Shard, ...], settings: WorkerSettings, config: AuditConfig, collector: _Collector
) -> None:
    """Run every shard; a shard whose worker died is retried once, alone, then given up."""
    queue = list(shards)
    jobs = _jobs(config, shards)
    while queue:
        tasks = [ShardTask(shard, settings) for shard in queue]
        try:
            with closing(run_tasks(audit_shard, tasks, config.backend, jobs)) as results:
                for result in results:
                    collector.accept(result)
            return
        except WorkerDied:
            pending = [shard for shard in queue if not collector.done(shard.ordinal)]
            inflight = collector.stage.inflight
            interrupted = [s for s in pending if (inflight / str(s.ordinal)).exists()]
            if not interrupted:
                interrupted = pending  # died outside any shard: take no chances, isolate all
            queue = [shard for shard in pending if shard not in interrupted]
            for shard in interrupted:
                (inflight / str(shard.ordinal)).unlink(missing_ok=True)
                _retry_alone(shard, settings, config.backend, jobs, collector)


def _jobs(config: AuditConfig, shards: tuple[Shard, ...]) -> int:
    return effective_jobs(config.n_jobs, len(shards), sum(shard.weight for shard in shards))


def _retry_alone(
    shard: Shard, settings: WorkerSettings, backend: str, jobs: int, collector: _Collector
) -> None:
    task = [ShardTask(shard, settings, attempt=2)]
    try:
        with closing(run_tasks(audit_shard, task, backend, jobs)) as results:
            for result in results:
                collector.accept(result)
    except WorkerDied as exc:
        (collector.stage.inflight / str(shard.ordinal)).unlink(missing_ok=True)
        collector.give_up(shard, f"the worker died twice ({exc})")


class _Collector:
    """Records staged files and the run's totals as results arrive; holds no records."""

    def __init__(
        self,
        stage: Stage,
        shards: tuple[Shard, ...],
        contract: Contract,
        run_id: str,
        progress: ProgressCallback | None,
        clock: float,
    ) -> None:
        self.stage = stage
        self.shards = {shard.ordinal: shard for shard in shards}
        self.contract = contract
        self.run_id = run_id
        self.progress = progress
        self.clock = clock
        self.tally = Tally()
        self.samples: dict[int, list[str]] = {}
        self.engine_samples: dict[int, list[str]] = {}
        self.finished: set[int] = set()
        self.not_audited: dict[int, NotAudited] = {}
        self.weight_done = 0
        self.weight_total = sum(shard.weight for shard in shards)

    def meta(self, table: str) -> dict[str, str]:
        return file_metadata(table, self.run_id, self.contract.sha256)

    def done(self, ordinal: int) -> bool:
        return ordinal in self.finished

    def accept(self, result: ShardResult) -> None:
        shard = self.shards[result.ordinal]
        if result.fault is not None:
            raise StoreError(f"{result.fault}; nothing was committed")
        if result.error is not None:
            self.give_up(shard, result.error)
            return
        self.stage.accept(result.files)
        self.tally.add(result.tally)
        self.samples[result.ordinal] = result.tally.samples
        self.engine_samples[result.ordinal] = result.tally.engine_samples
        self._finish(shard)

    def give_up(self, shard: Shard, reason: str) -> None:
        self.stage.discard(shard.ordinal)
        self.not_audited[shard.ordinal] = NotAudited(shard.name, reason, shard.records)
        self._finish(shard)

    def _finish(self, shard: Shard) -> None:
        self.finished.add(shard.ordinal)
        self.weight_done += shard.weight
        if self.progress is not None:
            self.progress(Progress(
                len(self.finished), len(self.shards), self.tally.pairs, self.weight_done,
                self.weight_total, time.perf_counter() - self.clock,
            ))

    def summary(
        self, config: AuditConfig, started: datetime, finished: datetime, duration: float,
        notes: tuple[str, ...] = (),
    ) -> RunSummary:
        return RunSummary.from_tally(
            self.tally,
            run_id=self.run_id,
            out=config.out,
            started=started,
            finished=finished,
            duration_s=duration,
            contract_sha256=self.contract.sha256,
            shards=len(self.shards),
            input_error_samples=_first(self.samples),
            not_audited=[self.not_audited[k] for k in sorted(self.not_audited)],
            mutate=config.mutate,
            fail_on=config.fail_on,
            max_failure_rate=config.max_failure_rate,
            engine_error_samples=_first(self.engine_samples),
            max_input_error_rate=config.max_input_error_rate,
            allow_engine_errors=config.allow_engine_errors,
            notes=notes,
        )


def _first(samples: dict[int, list[str]]) -> list[str]:
    """The first samples of the run, in shard order."""
    return [reason for ordinal in sorted(samples) for reason in samples[ordinal]][:MAX_SAMPLES]
