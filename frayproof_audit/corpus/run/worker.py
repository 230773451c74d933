"""The worker: read one shard → parse → load → check → mutate → staged Parquet part files.

`audit_shard` never raises. A bad record is a `pairs` row with `status = input_error`; an
unexpected exception while auditing one record (an engine bug) is a `pairs` row with `status =
engine_error` naming the exception and where it was raised, and the shard goes on with the next
record. Anything else unexpected (a reader that raised) ends the shard with an `error` value, and
the run reports the shard as not audited. A staging folder that cannot be written (a full disk)
is a `fault` value: the parent stops the run. A worker that dies outright (killed, out of memory)
cannot return anything: the executor knows which shards it had handed that worker
(`executor.WorkerLost.in_flight`), and the parent retries those, each alone, once.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from frayproof_audit.blame import introduced_errors
from frayproof_audit.contract import Contract
from frayproof_audit.corpus.inputs.field_map import FieldMap
from frayproof_audit.corpus.inputs.field_watch import FieldWatch, watched_paths
from frayproof_audit.corpus.inputs.record_fields import (
    FieldReader,
    Meta,
    MissingField,
    RecordProblem,
    parse_json_record_sized,
    record_of,
    snapshot_sizes,
)
from frayproof_audit.corpus.inputs.session_reader import read_source_rows
from frayproof_audit.corpus.inputs.shard_plan import Shard
from frayproof_audit.corpus.inputs.shard_reader import Raw, read_shard
from frayproof_audit.corpus.run import heap
from frayproof_audit.corpus.run.pair_repair import repair_pair, write_repaired
from frayproof_audit.corpus.run.record_tools import RecordTools
from frayproof_audit.corpus.run.tally import Tally
from frayproof_audit.corpus.store.arrow_tables import PARTITIONED_TABLES, SCHEMAS, TableBuilder, file_metadata
from frayproof_audit.corpus.store.failure_rule import Blame, counts_as_failure, counts_finding
from frayproof_audit.corpus.store.pair_status import PairStatus
from frayproof_audit.corpus.store.staging import stage_shard
from frayproof_audit.engine import check_blamed
from frayproof_audit.errors import InputError
from frayproof_audit.formats import Format, get_format
from frayproof_audit.formats.auto import pair_format
from frayproof_audit.loaded import Loaded
from frayproof_audit.report import Report

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """What every shard of a run needs; pickled with each task, parsed once in the parent."""

    run_id: str
    run_date: str
    contract: Contract
    fields: FieldMap
    mutate: bool
    operators: tuple[str, ...] | None
    input_format: str
    """Format of records without a `format` field."""
    max_record_bytes: int
    staging_dir: str
    inflight_dir: str | None = None
    max_mutants: int | None = None
    """Mutation sites judged per pair at most (None: all)."""
    repair_out: str | None = None
    """Folder for the repaired after snapshots of fully repairable failing pairs (None: none)."""
    accepted: frozenset[tuple[str, str]] = frozenset()
    """(pair_id, condition code) error findings a known-issue baseline accepts (`baseline_file`)."""


@dataclass(frozen=True, slots=True)
class ShardTask:
    shard: Shard
    settings: WorkerSettings
    attempt: int = 1
    """1, or 2 for the retry of a shard whose worker died."""


@dataclass(frozen=True, slots=True)
class ShardResult:
    """The part files a shard staged (relative to the staging folder) and its totals, or the
    error that ended it. Small on purpose: rows never travel back to the parent."""

    ordinal: int
    files: tuple[str, ...] = ()
    tally: Tally = field(default_factory=Tally)
    error: str | None = None
    fault: str | None = None
    """The staging folder could not be written (a full disk, an I/O error): the run cannot go on."""


_EMPTY_SHA = hashlib.sha256(b"").hexdigest()
_SNAPSHOT_PATHS = ("before", "after")
"""Where a derived pair's record keeps its snapshots (`record_of`: no field mapping)."""
AUTO = "auto"
"""`InputFile.source` of a file no source could be chosen for (evidence of two)."""
ENGINE_ERROR_FRAMES = 3
"""Innermost traceback frames named in `pairs.engine_error`."""
_MESSAGE_CHARS = 300


class _StagingFault(Exception):
    """The staging folder could not be written: the run cannot go on (not a bug, not the shard)."""


def audit_shard(task: ShardTask) -> ShardResult:
    ordinal, settings = task.shard.ordinal, task.settings
    marker = None
    try:  # errors are values: nothing crosses the pool as an exception
        marker = _staging(_mark, task)
        auditor = _Auditor(task)
        auditor.run()
        if settings.repair_out is not None:
            written = _staging(write_repaired, settings.repair_out, settings.run_id, ordinal,
                               auditor.repaired)
            if written is not None:
                auditor.tally.repaired_files += 1
                auditor.tally.repaired_records += len(auditor.repaired)
        tables = {name: builder.by_log_date() for name, builder in auditor.builders.items()}
        files = _staging(
            stage_shard, settings.staging_dir, settings.run_id, ordinal, tables,
            lambda table: file_metadata(table, settings.run_id, settings.contract.sha256),
        )
        return ShardResult(ordinal, files, auditor.tally)
    except _StagingFault as exc:
        return ShardResult(ordinal, fault=str(exc))
    except Exception as exc:
        return ShardResult(ordinal, error=f"{task.shard.name}: {type(exc).__name__}: {exc}")
    finally:
        _remove(marker)


def _staging(write: Callable[..., T], *args: Any) -> T:
    try:
        return write(*args)
    except OSError as exc:
        raise _StagingFault(f"cannot write the staging folder: {exc}") from exc


def _mark(task: ShardTask) -> str | None:
    folder = task.settings.inflight_dir
    if folder is None:
        return None
    marker = os.path.join(folder, str(task.shard.ordinal))
    with open(marker, "w", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()}\n")
    return marker


def _remove(marker: str | None) -> None:
    if marker is not None:
        with contextlib.suppress(OSError):
            os.unlink(marker)


class _Auditor:
    """Audits the records of one shard into table builders and a tally."""

    def __init__(self, task: ShardTask) -> None:
        self.shard = task.shard
        self.settings = task.settings
        self.builders = {name: TableBuilder(SCHEMAS[name]) for name in PARTITIONED_TABLES}
        self.tally = Tally()
        self.tools = RecordTools()
        self.repaired: list[bytes] = []
        self.pair_ids: set[str] = set()
        """The pair ids of the shard's records so far: a repeated one is a `duplicate`."""
        self.added: str | None = None
        """The pair id the current record added to `pair_ids` (taken back if it ends as an
        engine error, whose row has a pair id of its own)."""
        file = self.shard.file
        self.parquet = file.kind == "parquet"
        self.label = "row" if self.parquet else "line"
        self.reader = FieldReader(
            self.settings.fields, file.hive, self.parquet, self.settings.input_format
        )
        self.paths = (self.settings.fields.path("before"), self.settings.fields.path("after"))
        watched = watched_paths(self.settings.fields)
        self.watch = FieldWatch(watched, file.hive) if watched else None
        self.mutate_pair: Any = None
        if self.settings.mutate:
            from frayproof_audit.mutate import mutate_pair  # only runs that mutate pay for it

            self.mutate_pair = mutate_pair

    def run(self) -> None:
        if self.shard.whole:
            self._source_file()
            return
        columns = self.reader.columns() if self.parquet else None
        limit = self.settings.max_record_bytes
        records = 0
        for raw in read_shard(self.shard, limit, columns, self.reader.json_columns()):
            size = raw.size
            records += 1
            heap.before_record(size)
            self.added = None
            try:
                self._record(raw)
            except Exception as exc:  # a bug costs its record, never the shard
                self._engine_error(raw, exc)
            del raw  # a giant record is let go before the reader decodes the next one
            heap.after_record(size)
        self.tally.count_records(self.shard.start == 0, records)

    def _source_file(self) -> None:
        """A file a source reads: every row it derives in the shard's lines, each audited as
        the record `pairs -o` writes for it (`record_of`), through the same path as a record
        of the audit's own shape (`_pair`)."""
        file = self.shard.file
        first = Raw(self.shard.first_row, None, 0, _EMPTY_SHA)
        try:
            found = read_source_rows(self.shard, self.settings.max_record_bytes)
        except Exception as exc:  # a source's bug costs its file, never the shard's other work
            self._engine_error(first, exc)
            return
        self.label = found.label
        self.tally.count_source(file.source, found.counts, found.lineages, file.path, found.notes)
        if found.problem is not None:
            provenance = {"source_kind": None if file.source == AUTO else file.source}
            self._input_error(Raw(found.first_row, None, 0, _EMPTY_SHA), None, found.problem,
                              provenance)
            return
        fmt = _source_format(file.source)
        reader = FieldReader(FieldMap(), (), False, fmt)
        for row in found.rows:
            raw = Raw(row.source_row, None, 0, found.hashes.get(row.source_row, _EMPTY_SHA))
            self.added = None
            try:
                record = record_of(row, file.path, file.source, fmt, found.label, located=False)
                self._pair(raw, record, None, reader, _SNAPSHOT_PATHS)
            except Exception as exc:  # a bug costs its record, never the shard
                self._engine_error(raw, exc)

    def _record(self, raw: Raw) -> None:
        if raw.problem is not None:
            self._input_error(raw, None, raw.problem)
            return
        record, record_sizes = raw.value, None
        if self.parquet:
            if raw.size > self.settings.max_record_bytes:
                limit = self.settings.max_record_bytes
                self._input_error(raw, None, f"record is {raw.size} bytes, over --max-record-bytes {limit}")
                return
        else:
            try:
                record, record_sizes = parse_json_record_sized(raw.value)
            except RecordProblem as exc:
                self._input_error(raw, None, str(exc))
                return
        if self.watch is not None:
            self.tally.watched_records += 1
            self.watch.see(record, self.tally.watched_found, self.tally.watched_missing)
        self._pair(raw, record, record_sizes, self.reader, self.paths)

    def _pair(self, raw: Raw, record: dict[str, Any], record_sizes: dict[str, int] | None,
              reader: FieldReader, paths: tuple[str, str]) -> None:
        """One record (a line or row of pairs, or a derived pair's record): its row."""
        meta, problem = reader.meta(record)
        if problem is not None:
            self._input_error(raw, meta, problem)
            return
        try:
            fmt = get_format(meta.format or self.settings.input_format)
            before_list = reader.snapshot(record, "before", fmt.containers)
            after_list = reader.snapshot(record, "after", fmt.containers)
            before = _load(before_list, "before", fmt)
            after = _load(after_list, "after", fmt)
        except RecordProblem as exc:
            if isinstance(exc, MissingField):
                self.tally.note_missing(exc.field_name, exc.keys)
            self._input_error(raw, meta, str(exc))
            return
        try:
            contract = self.tools.contract_for(self.settings.contract, meta.tools)
        except InputError as exc:  # the record's tools are not tool definitions
            self._input_error(raw, meta, str(exc))
            return
        report, origins = check_blamed(before, after, contract)
        sizes = (len(before), len(after),
                 *snapshot_sizes(record, record_sizes, paths, (before_list, after_list)))
        self._checked(raw, meta, report, origins, sizes, before, after, contract, after_list)

    def _base(self, raw: Raw, meta: Meta | None) -> tuple[str, dict[str, Any]]:
        logged_at = meta.logged_at if meta is not None else None
        log_date = logged_at.date().isoformat() if logged_at is not None else self.settings.run_date
        pair_id = (meta.pair_id if meta is not None else None) or f"{self.shard.file.path}:{raw.row}"
        duplicate = pair_id in self.pair_ids
        if not duplicate:
            self.pair_ids.add(pair_id)
            self.added = pair_id
        return log_date, {
            "run_id": self.settings.run_id,
            "pair_id": pair_id,
            "duplicate": duplicate,
            "compactor": meta.compactor if meta is not None else None,
            "logged_at": logged_at,
            "logged_at_missing": logged_at is None,
            "carried": meta.carried if meta is not None else None,
        }

    def _input_error(self, raw: Raw, meta: Meta | None, problem: str,
                     provenance: dict[str, Any] | None = None) -> None:
        log_date, row = self._base(raw, meta)
        reason = f"{self.shard.file.path} {self.label} {raw.row}: {problem}"
        row.update(
            source=self.shard.file.path,
            source_row=raw.row,
            session_id=meta.session_id if meta is not None else None,
            format=meta.format if meta is not None else None,
            status=PairStatus.INPUT_ERROR,
            input_error=reason,
            record_sha256=raw.sha256,
        )
        if provenance is None and meta is not None:
            provenance = meta.provenance
        row.update(provenance or {"source_kind": self.shard.file.source})
        self.builders["pairs"].append(log_date, row)
        self.tally.count_pair(PairStatus.INPUT_ERROR, row["compactor"], duplicate=row["duplicate"])
        self.tally.sample(reason)

    def _engine_error(self, raw: Raw, exc: Exception) -> None:
        """The record's row when auditing it raised: no meta (reading it may be what failed)."""
        reason = f"{self.shard.file.path} {self.label} {raw.row}: {describe_exception(exc)}"
        if self.added is not None:
            self.pair_ids.discard(self.added)
            self.added = None
        row = {
            "run_id": self.settings.run_id,
            "pair_id": f"{self.shard.file.path}:{raw.row}",
            "source": self.shard.file.path,
            "source_row": raw.row,
            "status": PairStatus.ENGINE_ERROR,
            "duplicate": False,  # its pair id names its file and line: never repeated
            "engine_error": reason,
            "record_sha256": raw.sha256,
            "source_kind": None if self.shard.file.source == AUTO else self.shard.file.source,
        }
        self.builders["pairs"].append(self.settings.run_date, row)
        self.tally.count_pair(PairStatus.ENGINE_ERROR, None)
        self.tally.sample_engine_error(reason)

    def _checked(
        self,
        raw: Raw,
        meta: Meta,
        report: Report,
        origins: tuple[str, ...],
        sizes: tuple[int, int, int, int],
        before: Loaded,
        after: Loaded,
        contract: Contract,
        after_wire: Any = None,
    ) -> None:
        log_date, base = self._base(raw, meta)
        status = PairStatus.PASS if report.passed else PairStatus.FAIL
        introduced = introduced_errors(report, origins)
        pair = dict(
            base,
            source=self.shard.file.path,
            source_row=raw.row,
            session_id=meta.session_id,
            format=pair_format(before, after),  # the detected one under `auto`
            status=status,
            errors=report.errors,
            warnings=report.warnings,
            introduced_errors=introduced,
            messages_before=sizes[0],
            messages_after=sizes[1],
            bytes_before=sizes[2],
            bytes_after=sizes[3],
            record_sha256=raw.sha256,
            **(meta.provenance or {}),
        )
        outcome = None  # everything that can raise runs before the first row is added
        if self.mutate_pair is not None and report.passed:
            outcome = self.mutate_pair(
                before, after, contract, self.settings.operators, baseline=report,
                max_mutants=self.settings.max_mutants,
            )
        fixes = repair_pair(after_wire, after, before, contract, report, base["pair_id"],
                            self.settings.run_id)
        if fixes.line is not None and self.settings.repair_out is not None:
            self.repaired.append(fixes.line)
        findings = self.builders["findings"]
        per_check: dict[str, list[int]] = {}
        accepted = self.settings.accepted
        for violation, repairable, origin in zip(report.violations, fixes.repairable, origins,
                                                 strict=True):
            findings.append(log_date, dict(base, **violation.to_dict(), repairable=repairable,
                                           origin=origin))
            counts = per_check.setdefault(violation.check, [0, 0, 0, 0, 0])
            counts[0] += 1
            if violation.severity == "error":
                counts[1] += 1
                mine = counts_finding(origin, Blame.INTRODUCED)
                counts[2] += mine
                if accepted and (base["pair_id"], violation.code) in accepted:
                    counts[3] += 1
                    counts[4] += mine
        if not base["duplicate"]:  # a repeated pair id counts once (its first record)
            for check, (found, errors, introduced_here, known, known_introduced) in per_check.items():
                self.tally.count_check(check, found, errors, introduced_here, known, known_introduced)
        if outcome is not None:
            self._mutants(log_date, base, pair, outcome)
        self.builders["pairs"].append(log_date, pair)
        # a gate counts the pair when an error of it is one the baseline does not list (of any
        # origin under --blame all; introduced under --blame introduced)
        gated_all = any(c[1] > c[3] for c in per_check.values())
        gated_introduced = (counts_as_failure(status, introduced, Blame.INTRODUCED)
                            and any(c[2] > c[4] for c in per_check.values()))
        self.tally.count_pair(status, meta.compactor, introduced, (gated_all, gated_introduced),
                              duplicate=base["duplicate"])

    def _mutants(self, log_date: str, base: dict[str, Any], pair: dict[str, Any], outcome: Any) -> None:
        mutants = self.builders["mutants"]
        for mutant in outcome.mutants:
            mutants.append(log_date, dict(
                base,
                operator=mutant.operator,
                description=mutant.description,
                message_index=mutant.message_index,
                sites=list(mutant.sites),
                status=mutant.status,
                caught_by=list(mutant.caught_by),
                reason=mutant.reason,
            ))
            if not base["duplicate"]:
                self.tally.count_mutant(mutant.operator, mutant.status)
        not_judged = sum(mutant.budget_skipped for mutant in outcome.mutants)
        if not_judged and not base["duplicate"]:
            self.tally.count_budget(not_judged)
        applicable = outcome.caught + outcome.survived
        pair.update(
            mutants_applicable=applicable,
            mutants_caught=outcome.caught,
            mutants_survived=outcome.survived,
            mutants_skipped=outcome.skipped,
            mutation_score=outcome.caught / applicable if applicable else None,
        )


def describe_exception(exc: BaseException) -> str:
    """`Type: message (at pkg/file.py:12 in fn < ...)`: one line naming the innermost frames."""
    message = " ".join(str(exc).split())
    if len(message) > _MESSAGE_CHARS:
        message = message[: _MESSAGE_CHARS - 1] + "…"
    frames = traceback.extract_tb(exc.__traceback__)[-ENGINE_ERROR_FRAMES:]
    where = " < ".join(
        f"{_short_path(frame.filename)}:{frame.lineno} in {frame.name}" for frame in reversed(frames)
    )
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return f"{text} (at {where})" if where else text


def _short_path(filename: str) -> str:
    """A traceback path from the package folder on (`frayproof_audit/checks/x.py`), else its name."""
    parts = filename.replace(os.sep, "/").split("/")
    for anchor in ("frayproof_audit", "site-packages"):
        if anchor in parts:
            index = len(parts) - 1 - parts[::-1].index(anchor)
            return "/".join(parts[index + (anchor == "site-packages") :])
    return parts[-1]


def _source_format(name: str) -> str:
    """The wire format a source's rows are in, for a row that says none (a bad line)."""
    from frayproof_audit.sources import get_source

    return get_source(name).format


def _load(messages: Any, name: str, fmt: Format) -> Loaded:
    try:
        return fmt.load(messages)
    except InputError as exc:
        raise RecordProblem(f"{name}: {exc}") from None
