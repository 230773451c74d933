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

import functools
import inspect
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import Any, ParamSpec

from frayproof_audit.contract import Contract, load_contract
from frayproof_audit.corpus.inputs.expansion import InputFile, expand_inputs
from frayproof_audit.corpus.inputs.field_map import ConfigError, FieldMap
from frayproof_audit.corpus.inputs.field_watch import watched_paths
from frayproof_audit.corpus.inputs.incremental_plan import Incremental, plan_incremental
from frayproof_audit.corpus.inputs.shard_plan import Shard, Span, plan
from frayproof_audit.corpus.inputs.source_choice import accepts, choose_sources
from frayproof_audit.corpus.run.audit_config import AuditConfig, RunOptions
from frayproof_audit.corpus.run.baseline_file import read_baseline
from frayproof_audit.corpus.run.duplicates import mark_duplicates
from frayproof_audit.corpus.run.executor import (
    CLUSTER_BACKENDS,
    ClusterLost,
    Executor,
    WorkerLost,
    effective_jobs,
)
from frayproof_audit.corpus.run.summary import NotAudited, RunSummary
from frayproof_audit.corpus.run.tally import MAX_SAMPLES, Tally
from frayproof_audit.corpus.run.worker import ShardResult, ShardTask, WorkerSettings, audit_shard
from frayproof_audit.corpus.store.arrow_tables import file_metadata, runs_row
from frayproof_audit.corpus.store.failure_rule import Blame
from frayproof_audit.corpus.store.layout import StoreError, output_location
from frayproof_audit.corpus.store.local_stage import Stage
from frayproof_audit.corpus.store.object_stage import ObjectStage
from frayproof_audit.corpus.store.staging import open_stage
from frayproof_audit.errors import InputError

_Executor = Executor[WorkerSettings, "_Piece", ShardResult]


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


class ReplayMismatch(InputError):
    """A `rejudge` replay did not read the records its original run read (exit 2)."""


@dataclass(frozen=True, slots=True)
class Replay:
    """What a `rejudge` run takes from the run it judges again (`corpus/run/rejudge.py`): it
    audits exactly that run's input files (and, for an `--incremental` run, exactly its ranges),
    files its undated records under that run's date, records the same `runs.sources` and names
    the original in `runs.rejudge_of`; before anything is committed, `check` compares what it
    read with what the original read."""

    of: str
    """The original run's id."""
    run_date: str
    """The original run's start date (`YYYY-MM-DD`): the partition of records without a
    usable `logged_at`."""
    sources: frozenset[str]
    """The input files the original's `pairs` rows name (`pairs.source`)."""
    spans: Mapping[str, tuple[Span, ...]] | None
    """An incremental original's ranges by path (None: whole files)."""
    recorded_sources: list[dict[str, Any]] | None
    """The original's `runs.sources`, recorded again for the replay (None: not incremental)."""
    check: Callable[[Stage | ObjectStage], None]
    """Raises `ReplayMismatch` when the staged `pairs` are not the original's records."""

    def files(self, found: tuple[InputFile, ...]) -> tuple[InputFile, ...]:
        """The original's files among `found` (the inputs expanded again), as the original
        named them (a cluster run named them absolute); `ReplayMismatch` naming any gone."""
        kept: dict[str, InputFile] = {}
        for file in found:
            for candidate in (file, file.absolute()):
                if candidate.path in self.sources:
                    kept.setdefault(candidate.path, candidate)
        gone = sorted(self.sources - set(kept))
        if gone:
            shown = ", ".join(gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
            raise ReplayMismatch(f"{len(gone)} input file(s) of run {self.of} are gone: {shown}")
        return tuple(sorted(kept.values(), key=lambda file: file.path))


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditKeywords(RunOptions):
    """The parameters of `audit()`: every `RunOptions` field as a keyword, and what a Python
    caller spells its own way: the inputs (one path or several), the contract and OUT first,
    `jobs` (`AuditConfig.n_jobs`), `fields` as a mapping of field names to dotted paths (or a
    `FieldMap`), and the `progress` callback (no option of the run)."""

    inputs: str | Sequence[str] = field(kw_only=False)
    contract: str | None = field(kw_only=False)
    out: str = field(kw_only=False)
    jobs: int = -1
    fields: Mapping[str, str] | FieldMap | None = None
    progress: ProgressCallback | None = None


_P = ParamSpec("_P")


def _called_with(
    parameters: Callable[_P, AuditKeywords],
) -> Callable[[Callable[[AuditKeywords], RunSummary]], Callable[_P, RunSummary]]:
    """`run` as the function whose parameters are those of `parameters` (a dataclass): what a
    caller passes is checked (by mypy, and by the dataclass when called) against one definition."""

    def decorate(run: Callable[[AuditKeywords], RunSummary]) -> Callable[_P, RunSummary]:
        @functools.wraps(run)
        def call(*args: _P.args, **kwargs: _P.kwargs) -> RunSummary:
            return run(parameters(*args, **kwargs))

        returns = inspect.signature(run).return_annotation
        call.__signature__ = inspect.signature(parameters).replace(  # type: ignore[attr-defined]
            return_annotation=returns)
        return call

    return decorate


@_called_with(AuditKeywords)
def audit(keywords: AuditKeywords) -> RunSummary:
    """Audit JSONL/Parquet logs of before/after pairs into the Parquet dataset at `out`:
    `audit(inputs, contract, out, **options)`.

    The options are `RunOptions`' fields (the same as `AuditConfig`'s), plus `jobs` (its
    `n_jobs`), `fields` (field names to dotted paths) and `progress` (`AuditKeywords`). Raises
    `InputError` (a bad contract, option or input path) before any work.
    """
    given = keywords.fields
    field_map = given if isinstance(given, FieldMap) else FieldMap().with_specs(dict(given or {}))
    options = {option.name: _frozen(getattr(keywords, option.name)) for option in fields(RunOptions)}
    config = AuditConfig(
        inputs=(keywords.inputs,) if isinstance(keywords.inputs, str) else tuple(keywords.inputs),
        out=keywords.out,
        contract=keywords.contract,
        n_jobs=keywords.jobs,
        fields=field_map,
        **options,
    )
    return run_audit(config, keywords.progress)


def _frozen(value: Any) -> Any:
    """A list given for a tuple option (`fail_on=[...]`) as the tuple the frozen config holds."""
    return tuple(value) if isinstance(value, list) else value


def new_run_id(now: datetime | None = None) -> str:
    """The default run id: `YYYYMMDDTHHMMSSZ-<6 hex>` (UTC)."""
    return f"{now or datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"


def run_audit(
    config: AuditConfig, progress: ProgressCallback | None = None, replay: Replay | None = None
) -> RunSummary:
    """Run one audit as configured; the `RunSummary` owns the exit code. With `replay`, the
    audit judges again what an earlier run read (`Replay`)."""
    started = datetime.now(UTC)
    clock = time.perf_counter()
    run_id = config.run_id or new_run_id(started)
    output_location(config.out, writing=True)  # a bad OUT is refused before anything is read or created
    contract = load_contract(config.contract)
    accepted = read_baseline(config.baseline_findings) if config.baseline_findings else frozenset()
    if config.mutate:
        _check_mutation(config.operators)
    expanded = expand_inputs(config.inputs, config.out, config.repair_folder,
                             accepts(config.source))
    chosen = expanded.files if replay is None else replay.files(expanded.files)
    sourced = choose_sources(chosen, config.source)
    files = sourced.files
    if config.backend in CLUSTER_BACKENDS and replay is None:  # workers elsewhere: no relative names
        files = tuple(file.absolute() for file in files)
    executor: _Executor = Executor(config.backend, _estimated_jobs(config, files), config.scheduler)
    try:
        executor.start()  # loky workers start (and import the engine) while the parent plans
        incremental: Incremental | None = None
        if config.incremental:
            incremental = plan_incremental(files, config.out, contract.fingerprint, run_id)
            files = incremental.files
        spans = incremental.spans if incremental else replay.spans if replay else None
        shards = plan(files, config.shard_bytes, spans)
        executor.n_jobs = _jobs(config, shards)
        stage = open_stage(config.out, run_id)
        try:
            run_date = replay.run_date if replay is not None else started.date().isoformat()
            settings = WorkerSettings(
                run_id=run_id,
                run_date=run_date,
                contract=contract,
                fields=config.fields,
                mutate=config.mutate,
                operators=config.operators,
                input_format=config.input_format or contract.format,
                max_record_bytes=config.max_record_bytes,
                staging_dir=stage.worker_folder,
                max_mutants=config.max_mutants_per_pair,
                repair_out=config.repair_folder,
                accepted=accepted,
            )
            collector = _Collector(stage, shards, contract, run_id, progress, clock)
            _execute(shards, settings, executor, collector)
            mark_duplicates(stage, collector.meta, collector.tally, accepted)
            stage.fill_empty_tables(run_date, collector.meta)
            finished = datetime.now(UTC)
            notes = [note for note in (expanded.note(), incremental and incremental.note(),
                                       *sourced.notes()) if note]
            summary = collector.summary(config, started, finished, time.perf_counter() - clock,
                                        notes=tuple(notes), incremental=incremental)
            audited = None
            if incremental is not None:
                audited = incremental.audited(shards, collector.pairs, set(collector.not_audited))
            if replay is not None:
                replay.check(stage)
                audited = replay.recorded_sources
            row = runs_row(config, summary, contract, started, finished, executor.jobs, stage.staged,
                           audited, None if replay is None else replay.of)
            stage.commit(row, file_metadata("runs", run_id, contract.sha256))
        except BaseException:
            executor.close()  # first: a worker still auditing would write into the staging folder
            stage.close()
            raise
    finally:
        executor.close()
    return summary


def _check_mutation(operators: tuple[str, ...] | None) -> None:
    from frayproof_audit.mutate.operators import operator_names  # only runs that mutate pay for it

    known = operator_names()
    unknown = [name for name in operators or () if name not in known]
    if unknown:
        raise ConfigError(f"unknown operator(s) {', '.join(unknown)} (known: {', '.join(known)})")


@dataclass(frozen=True, slots=True)
class _Piece:
    """One task: a shard and which attempt this is (2 for the retry of a lost one)."""

    shard: Shard
    attempt: int = 1


@dataclass(frozen=True, slots=True)
class _ShardCall:
    """What a worker runs: `function` (normally `audit_shard`) on one shard with the run's
    settings, which the executor hands to every task (`Executor.submit`'s `shared`)."""

    function: Callable[[ShardTask], ShardResult]

    def __call__(self, settings: WorkerSettings, piece: _Piece) -> ShardResult:
        return self.function(ShardTask(piece.shard, settings, piece.attempt))


def _execute(
    shards: tuple[Shard, ...], settings: WorkerSettings, executor: _Executor, collector: _Collector
) -> None:
    """Run every shard; a shard whose worker was lost is retried once, alone, then given up.

    Shards are handed out largest first (`dispatch_order`). The executor names the shards that
    were in flight when a worker vanished; the others go on in the (new) pool. The same on every
    backend. When no worker is left at all (`ClusterLost`: a cluster whose workers all died and
    none came back), nothing more can run: every shard not done is given up, by name, at once,
    instead of each waiting for a worker in turn."""
    call = _ShardCall(audit_shard)  # looked up now, so a test can stand in for it
    queue = dispatch_order(shards)
    try:
        while queue:
            pieces = [_Piece(shard) for shard in queue]
            executor.submit(call, settings, pieces)
            try:
                for result in executor.completed():
                    collector.accept(result)
                return
            except ClusterLost:
                raise
            except WorkerLost as exc:
                pending = [shard for shard in queue if not collector.done(shard.ordinal)]
                lost = [pieces[i].shard for i in exc.in_flight if not collector.done(pieces[i].shard.ordinal)]
                if not lost:
                    lost = pending  # lost outside any shard: take no chances, isolate all
                queue = [shard for shard in pending if shard not in lost]
                for shard in lost:
                    _retry_alone(shard, settings, executor, call, collector)
    except ClusterLost as exc:
        for shard in shards:
            if not collector.done(shard.ordinal):
                collector.give_up(shard, str(exc))


def dispatch_order(shards: Sequence[Shard]) -> list[Shard]:
    """The shards by weight, largest first, ties in plan order. The last shards to start are
    then the small ones, so workers finish together: a big shard handed out last (a whole
    `.gz` file is one shard) would leave the other workers idle while it runs. Results do not
    depend on it: every shard writes its own files, named by its ordinal."""
    return sorted(shards, key=lambda shard: -shard.weight)


def _estimated_jobs(config: AuditConfig, files: tuple[InputFile, ...]) -> int:
    """`_jobs` before planning, from file sizes alone (what starting the pool early needs)."""
    tasks = sum(max(1, -(-file.size // config.shard_bytes)) for file in files)
    return effective_jobs(config.n_jobs, tasks, sum(file.size for file in files))


def _jobs(config: AuditConfig, shards: tuple[Shard, ...]) -> int:
    return effective_jobs(config.n_jobs, len(shards), sum(shard.weight for shard in shards))


def _retry_alone(
    shard: Shard, settings: WorkerSettings, executor: _Executor, call: _ShardCall, collector: _Collector
) -> None:
    executor.submit(call, settings, [_Piece(shard, attempt=2)])
    try:
        for result in executor.completed():
            collector.accept(result)
    except ClusterLost:
        raise  # no worker for any shard: `_execute` gives them all up
    except WorkerLost as exc:
        collector.give_up(shard, f"the worker died twice ({exc})")


class _Collector:
    """Records staged files and the run's totals as results arrive; holds no records."""

    def __init__(
        self,
        stage: Stage | ObjectStage,
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
        self.watched_missing: dict[int, dict[str, tuple[str, tuple[str, ...]]]] = {}
        self.finished: set[int] = set()
        self.not_audited: dict[int, NotAudited] = {}
        self.weight_done = 0
        self.pairs: dict[int, int] = {}
        """Shard ordinal → pairs it audited."""
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
        self.pairs[result.ordinal] = result.tally.pairs
        self.samples[result.ordinal] = result.tally.samples
        self.engine_samples[result.ordinal] = result.tally.engine_samples
        self.watched_missing[result.ordinal] = result.tally.watched_missing
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
        notes: tuple[str, ...] = (), incremental: Incremental | None = None,
    ) -> RunSummary:
        missing: dict[str, tuple[str, tuple[str, ...]]] = {}
        for ordinal in sorted(self.watched_missing):  # the first record lacking it, in input order
            for name, where in self.watched_missing[ordinal].items():
                missing.setdefault(name, where)
        self.tally.watched_missing = missing
        summary = RunSummary.from_tally(
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
            watched=watched_paths(config.fields),
            strict_fields=config.strict_fields,
            repair_out=config.repair_folder,
            failure_rate_gates=config.failure_rate_gates,
            min_pairs=config.min_pairs,
            strict_min_pairs=config.strict_min_pairs,
            baseline_findings=config.baseline_findings,
            blame=Blame(config.blame),
        )
        return replace(summary, skipped=incremental.skipped) if incremental is not None else summary


def _first(samples: dict[int, list[str]]) -> list[str]:
    """The first samples of the run, in shard order."""
    return [reason for ordinal in sorted(samples) for reason in samples[ordinal]][:MAX_SAMPLES]
