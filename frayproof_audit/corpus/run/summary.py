"""`RunSummary`: what one audit found, the gates the user set, and the exit code they decide.

Exit codes, decided here only (`RunSummary.exit_code`):

* **2, nothing audited** — no pair could be checked (pass + fail == 0): an empty input, every
  record an input or engine error, every shard lost. Like pytest's "no tests ran", this is never
  a pass, whatever the gates say (`--fail-on none` included). The run is still committed, so the
  tables show what happened.
* **2, a mapping not found** — with `--strict-fields`, a mapped field (`--field`) found in
  fewer than half the records read (`field_warnings`; without it, a warning). The run is
  committed as failed, like a run that audited nothing, so its misfiled rows stay out of
  `stats`, `trend` and `report`.
* **1, a gate failed** — one sentence per gate in `gate_failures`:
  * engine errors: any record whose audit raised an unexpected exception (a bug), unless
    `--allow-engine-errors`; `--fail-on none` does not cover them;
  * shards that could not be audited (their worker died twice), under every `--fail-on` but `none`;
  * `--fail-on failures` (the default) — any failing pair, or with `--max-failure-rate R` a
    failure rate above R; a failing pair counts only when the compactor introduced an error,
    unless `--blame all` (`corpus.store.failure_rule`, the rule every reading of a dataset shares);
  * `--max-failure-rate CHECK=R` / `compactor:NAME=R` — one check's or one compactor's rate
    above R (`rate_gates`; given alone they replace "any failure" too), and with
    `--strict-min-pairs` a compactor too small to judge; a pair whose every counted error
    finding the `--baseline-findings` file lists counts as failed for none of these gates;
  * `--fail-on survivors` — any surviving mutant;
  * `--fail-on input-errors` — any unreadable record; otherwise the input-error rate
    (input errors / records) above `--max-input-error-rate` (default 0.5) fails the run;
  * `--fail-on none` turns off every gate above except engine errors.
* **0** otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from frayproof_audit.corpus.inputs.field_watch import KEYS_SHOWN, Watched
from frayproof_audit.corpus.run.rate_gates import (
    DEFAULT_MIN_PAIRS,
    FailureRateGate,
    SliceVerdicts,
    judge,
)
from frayproof_audit.corpus.run.tally import Tally
from frayproof_audit.corpus.store.failure_rule import DEFAULT_BLAME, Blame
from frayproof_audit.corpus.store.pair_status import PairStatus
from frayproof_audit.corpus.store.run_status import RunStatus
from frayproof_audit.report import EXIT_FAIL, EXIT_INPUT_ERROR, EXIT_PASS

SUMMARY_SCHEMA_VERSION = 2
"""Version of the run summary's JSON document (`audit --format json`, `RunSummary.to_dict`)."""
TOP = 5


@dataclass(frozen=True, slots=True)
class HeldBack:
    """The last line of a plain JSONL input that had no newline yet (`--incremental`): not yet
    a record, so not audited; the next incremental run starts at it."""

    path: str
    line: int
    offset: int
    """Byte offset where the line starts."""

    def to_dict(self) -> dict[str, str | int]:
        return {"path": self.path, "line": self.line, "offset": self.offset}


_HELD_BACK_SHOWN = 5
_LINEAGES_SHOWN = 10
PAIRS = "pairs"
_CLASSES = ("append", "summarize", "truncate", "clear", "rewind", "stateful", "unrelated")


def _order(name: str) -> int:
    return _CLASSES.index(name) if name in _CLASSES else len(_CLASSES)


@dataclass(frozen=True, slots=True)
class Skipped:
    """What `--incremental` left out, because another committed run with the same contract
    fingerprint already audited it, and what it audited anyway."""

    unchanged_inputs: int = 0
    """Inputs skipped whole: nothing in them that another run did not audit."""
    unchanged_records: int = 0
    """Their records (lines or rows), as the runs that audited them counted them."""
    appended_inputs: int = 0
    """Inputs audited in part: only what no other run audited (lines appended since)."""
    appended_records: int = 0
    """Lines of those inputs skipped because another run audited them."""
    changed_inputs: int = 0
    """Inputs audited before whose content changed (rewritten, truncated): audited in full."""
    new_inputs: int = 0
    """Inputs no run with this contract fingerprint audited before."""
    moved_inputs: int = 0
    """Inputs under a new name (rotated: renamed, or compressed) whose bytes start with what
    another run audited under the old name: only the rest is audited."""
    moved_records: int = 0
    """Records of moved inputs skipped because they were audited under the old name."""
    held_back: tuple[HeldBack, ...] = ()
    """Last lines without their newline yet: audited by a later run, once complete."""

    @property
    def records(self) -> int:
        return self.unchanged_records + self.appended_records + self.moved_records

    def to_dict(self) -> dict[str, Any]:
        return {
            "skipped_records": self.records,
            "unchanged_inputs": self.unchanged_inputs,
            "unchanged_records": self.unchanged_records,
            "appended_inputs": self.appended_inputs,
            "appended_records_skipped": self.appended_records,
            "changed_inputs": self.changed_inputs,
            "new_inputs": self.new_inputs,
            "moved_inputs": self.moved_inputs,
            "moved_records_skipped": self.moved_records,
            "held_back_lines": len(self.held_back),
            "held_back": [held.to_dict() for held in self.held_back],
        }

    def to_text(self) -> str:
        text = (f"incremental: skipped {self.records:,} already audited record(s): "
                f"{self.unchanged_inputs:,} unchanged input(s) ({self.unchanged_records:,}),"
                f" the old lines of {self.appended_inputs:,} appended input(s)"
                f" ({self.appended_records:,})")
        if self.moved_inputs:
            text += (f", the audited lines of {self.moved_inputs:,} moved (rotated) input(s)"
                     f" ({self.moved_records:,})")
        text += (f"; audited {self.new_inputs:,} new and {self.changed_inputs:,} changed input(s)"
                 " in full")
        if self.held_back:
            shown = ", ".join(f"{held.path} line {held.line}" for held in self.held_back[:_HELD_BACK_SHOWN])
            more = len(self.held_back) - _HELD_BACK_SHOWN
            text += (f"; held back {len(self.held_back):,} incomplete last line(s) (no newline yet):"
                     f" {shown}{f' and {more:,} more' if more > 0 else ''}")
        return text


@dataclass(frozen=True, slots=True)
class NotAudited:
    """A shard whose records are not in the tables, and why."""

    shard: str
    reason: str
    records: int | None


@dataclass(frozen=True, slots=True)
class CheckLine:
    """One check over the run; the same names as the `stats` checks table."""

    check: str
    findings: int
    pairs_affected: int
    """Pairs with any finding of this check."""
    failing_pairs: int
    """Pairs with an error finding of this check."""
    introduced_failing_pairs: int = 0
    """Pairs with an error finding of this check the compactor introduced."""
    gated_pairs: int = 0
    """Pairs with an error finding of this check the known-issue baseline does not accept."""
    gated_introduced_pairs: int = 0
    """Pairs with an introduced error finding of this check the baseline does not accept."""

    def failing(self, blame: Blame) -> int:
        """Pairs this check fails under `blame`."""
        return self.failing_pairs if blame is Blame.ALL else self.introduced_failing_pairs

    def gated(self, blame: Blame) -> int:
        """Pairs this check's gate counts under `blame`: failing, less the baseline's."""
        return self.gated_pairs if blame is Blame.ALL else self.gated_introduced_pairs


@dataclass(frozen=True, slots=True)
class CompactorLine:
    compactor: str | None
    pairs: int
    failed: int
    input_errors: int
    engine_errors: int = 0
    introduced_failed: int = 0
    """Failing pairs whose compactor introduced an error."""
    gated: int = 0
    """Failing pairs with an error the known-issue baseline does not accept."""
    gated_introduced: int = 0
    """Failing pairs with an introduced error the baseline does not accept."""
    repeated: int = 0
    """Records checked (passed or failed) whose pair id an earlier record of the run had: in
    `pairs`, never in a rate."""
    repeated_failed: int = 0
    """Of those, the failing ones (in `failed`)."""

    @property
    def checked(self) -> int:
        """Distinct pairs judged: what a failure rate divides by (a repeated id counts once)."""
        return self.pairs - self.input_errors - self.engine_errors - self.repeated

    def failing(self, blame: Blame) -> int:
        """Distinct pairs of this compactor that count as its failures under `blame`."""
        return self.failed - self.repeated_failed if blame is Blame.ALL else self.introduced_failed

    def gated_failing(self, blame: Blame) -> int:
        """Of those, the pairs its gate counts: less the ones the baseline accepts whole."""
        return self.gated if blame is Blame.ALL else self.gated_introduced


@dataclass(frozen=True, slots=True)
class SourceLine:
    """What the files one source read held (`sources.Counts`): valid lines that are no
    compaction are only counted here, never rows. For `pairs`, its files and records."""

    source: str
    files: int
    lines: int
    events: int
    other: int = 0
    problems: int = 0
    blank: int = 0
    calls: int = 0
    classifications: tuple[tuple[str, int], ...] = ()
    """Request logs: how many transitions got each classification, over every lineage."""

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"files": self.files, "lines": self.lines, "events": self.events,
                                 "other": self.other, "problems": self.problems,
                                 "blank": self.blank, "calls": self.calls}
        if self.classifications:
            found["classifications"] = dict(self.classifications)
        return found

    def to_text(self) -> str:
        if self.source == PAIRS:
            return f"{self.files:,} file(s), {self.lines:,} record(s)"
        text = (f"{self.files:,} file(s), {self.lines:,} line(s): {self.events:,} with a"
                f" compaction, {self.other:,} other, {self.problems:,} bad")
        if self.calls:
            text += f"; {self.calls:,} model call(s)"
        if self.classifications:
            text += " (" + " · ".join(f"{name} {count:,}" for name, count in self.classifications
                                      if count) + ")"
        return text


@dataclass(frozen=True, slots=True)
class LineageLine:
    """One conversation of a request log and how many of its transitions got each class."""

    source: str
    """The file it was read from."""
    session_id: str
    grouped_by: str
    counts: tuple[tuple[str, int], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "session_id": self.session_id,
                "grouped_by": self.grouped_by, "counts": dict(self.counts)}


@dataclass(frozen=True, slots=True)
class OperatorLine:
    operator: str
    caught: int
    survived: int
    skipped: int

    @property
    def applicable(self) -> int:
        return self.caught + self.survived

    @property
    def survival_rate(self) -> float | None:
        return self.survived / self.applicable if self.applicable else None


@dataclass(frozen=True, slots=True)
class FieldWarning:
    """A mapped field found in fewer than half the records read: likely a typo in the map."""

    name: str
    option: str
    """How the user mapped it (`--field compactor=strategy.nmae`)."""
    path: str
    found: int
    records: int
    where: str
    """How much of the path the first record lacking it matched ("": not even its first key)."""
    keys: tuple[str, ...]
    """The keys of that record there: what the path could have meant."""

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.name, "option": self.option, "path": self.path,
                "found": self.found, "records": self.records, "matched": self.where,
                "keys": list(self.keys)}

    def to_text(self) -> str:
        share = f" ({self.found / self.records:.0%})" if self.records else ""
        top = "the first record lacking it has top-level keys"
        there = f"`{self.where}` has keys" if self.where else top
        shown = ", ".join(self.keys[:KEYS_SHOWN]) or "none"
        more = len(self.keys) - KEYS_SHOWN
        return (f"{self.option}: found in {self.found:,} of {self.records:,} record(s){share};"
                f" {there}: {shown}{f' and {more} more' if more > 0 else ''}")


def field_warnings(watched: Iterable[Watched], tally: Tally) -> tuple[FieldWarning, ...]:
    """The watched fields found in fewer than half the records read as objects."""
    records = tally.watched_records
    found = []
    for item in watched:
        count = tally.watched_found.get(item.name, 0)
        if records and 2 * count < records:
            where, keys = tally.watched_missing.get(item.name, ("", ()))
            found.append(FieldWarning(item.name, item.option, item.path, count, records, where,
                                      keys))
    return tuple(found)


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


@dataclass(frozen=True, slots=True)
class RunSummary:
    """The result of `audit`: counts, the top offenders, gates and the exit code."""

    run_id: str
    out: str
    started_at: str
    finished_at: str
    duration_s: float
    contract_sha256: str
    shards: int
    pairs: int
    passed: int
    failed: int
    input_errors: int
    mutate: bool
    mutants_caught: int
    mutants_survived: int
    mutants_skipped: int
    checks: tuple[CheckLine, ...]
    compactors: tuple[CompactorLine, ...]
    operators: tuple[OperatorLine, ...]
    input_error_samples: tuple[str, ...]
    not_audited: tuple[NotAudited, ...]
    fail_on: tuple[str, ...]
    max_failure_rate: float | None
    engine_errors: int = 0
    engine_error_samples: tuple[str, ...] = ()
    max_input_error_rate: float | None = None
    """Input errors / records above this fail the run (None: no rate gate)."""
    allow_engine_errors: bool = False
    notes: tuple[str, ...] = ()
    """What the user should know about the run's inputs: skipped dataset folders, a field map
    that points where records keep nothing."""
    budget_pairs: int = 0
    """Pairs whose mutation sites exceeded the per-pair budget (`mutate.budget`)."""
    budget_sites: int = 0
    """Mutation sites the budget left unjudged (each such operator has one skipped entry)."""
    skipped: Skipped | None = None
    """What `--incremental` skipped (None: not an incremental run)."""
    sources: tuple[SourceLine, ...] = ()
    """Per source, what its files held (`pairs` first, then the registry's order)."""
    lineages: tuple[LineageLine, ...] = ()
    """Request logs: the first lineages (conversations) and their classification counts."""
    lineages_total: int = 0
    field_warnings: tuple[FieldWarning, ...] = ()
    """Mapped fields found in fewer than half the records read (`field_watch`)."""
    strict_fields: bool = False
    """`--strict-fields`: a field warning is an input error (exit 2, the run committed failed)."""
    repair_out: str | None = None
    """`--repair-out`'s folder (None: not asked)."""
    repaired_files: int = 0
    repaired_records: int = 0
    """The files `--repair-out` wrote and the repaired snapshots in them."""
    duplicates: int = 0
    """Records whose pair_id an earlier record of the run had (`pairs.duplicate`)."""
    duplicate_passed: int = 0
    duplicate_failed: int = 0
    """Of those, the ones that passed or failed: left out of the failure rate."""
    failure_rate_gates: tuple[FailureRateGate, ...] = ()
    """Per-check and per-compactor `--max-failure-rate` gates (`rate_gates`)."""
    min_pairs: int = DEFAULT_MIN_PAIRS
    strict_min_pairs: bool = False
    baseline_findings: str | None = None
    """The known-issue baseline file the gates read (None: none)."""
    baseline_accepted_findings: int = 0
    """Error findings the baseline accepts: stored and counted, but failing no gate."""
    introduced_failures: int | None = None
    """Failing pairs whose compactor introduced an error (`failed` counts every failing pair;
    None: not known, every failing pair, as `corpus.store.failure_rule` reads a row without blame)."""
    blame: Blame = DEFAULT_BLAME
    """Which failing pairs the gates count (`--blame`): those with an introduced error, or all."""
    gated_failures: int | None = None
    """Failing pairs with an error the baseline does not accept, under `--blame all` (None: no
    baseline was read, every failing pair)."""
    gated_introduced_failures: int | None = None
    """The same under `--blame introduced` (None: every introduced failure)."""

    @classmethod
    def from_tally(
        cls,
        tally: Tally,
        *,
        run_id: str,
        out: str,
        started: datetime,
        finished: datetime,
        duration_s: float,
        contract_sha256: str,
        shards: int,
        input_error_samples: Iterable[str],
        not_audited: Iterable[NotAudited],
        mutate: bool,
        fail_on: tuple[str, ...],
        max_failure_rate: float | None,
        engine_error_samples: Iterable[str] = (),
        max_input_error_rate: float | None = None,
        allow_engine_errors: bool = False,
        notes: Iterable[str] = (),
        watched: Iterable[Watched] = (),
        strict_fields: bool = False,
        repair_out: str | None = None,
        failure_rate_gates: tuple[FailureRateGate, ...] = (),
        min_pairs: int = DEFAULT_MIN_PAIRS,
        strict_min_pairs: bool = False,
        baseline_findings: str | None = None,
        blame: Blame = DEFAULT_BLAME,
    ) -> RunSummary:
        """The summary of a run from its merged tally, the top offenders sorted worst first."""
        checks = sorted(
            (CheckLine(name, *row) for name, row in tally.checks.items()),
            key=lambda c: (-c.failing(blame), -c.failing_pairs, -c.findings, c.check),
        )
        compactors = sorted(
            (CompactorLine(name or None, *row) for name, row in tally.compactors.items()),
            key=lambda c: (-c.failing(blame), -c.failed, -c.pairs, c.compactor or ""),
        )
        operators = sorted(
            (OperatorLine(name, *row) for name, row in tally.operators.items()),
            key=lambda o: (-(o.survival_rate or 0.0), o.operator),
        )
        return cls(
            run_id=run_id,
            out=out,
            started_at=started.isoformat(),
            finished_at=finished.isoformat(),
            duration_s=duration_s,
            contract_sha256=contract_sha256,
            shards=shards,
            pairs=tally.pairs,
            passed=tally.passed,
            failed=tally.failed,
            input_errors=tally.input_errors,
            mutate=mutate,
            mutants_caught=tally.mutants_caught,
            mutants_survived=tally.mutants_survived,
            mutants_skipped=tally.mutants_skipped,
            checks=tuple(checks),
            compactors=tuple(compactors),
            operators=tuple(operators),
            input_error_samples=tuple(input_error_samples),
            not_audited=tuple(not_audited),
            fail_on=fail_on,
            max_failure_rate=max_failure_rate,
            engine_errors=tally.engine_errors,
            engine_error_samples=tuple(engine_error_samples),
            max_input_error_rate=max_input_error_rate,
            allow_engine_errors=allow_engine_errors,
            notes=(*notes, *_missing_field_notes(tally), *tally.source_notes),
            budget_pairs=tally.budget_pairs,
            budget_sites=tally.budget_sites,
            sources=tuple(
                _source_line(name, row, tally.classifications.get(name, {}))
                for name, row in sorted(tally.sources.items(), key=lambda item: (item[0] != PAIRS, item[0]))),
            lineages=tuple(LineageLine(*lineage) for lineage in tally.lineages),
            lineages_total=tally.lineages_total,
            field_warnings=field_warnings(watched, tally),
            strict_fields=strict_fields,
            repair_out=repair_out,
            repaired_files=tally.repaired_files,
            repaired_records=tally.repaired_records,
            duplicates=sum(tally.duplicates.values()),
            duplicate_passed=tally.duplicates.get(PairStatus.PASS, 0),
            duplicate_failed=tally.duplicates.get(PairStatus.FAIL, 0),
            failure_rate_gates=failure_rate_gates,
            min_pairs=min_pairs,
            strict_min_pairs=strict_min_pairs,
            baseline_findings=baseline_findings,
            baseline_accepted_findings=tally.baseline_findings,
            introduced_failures=tally.introduced_failures,
            blame=blame,
            gated_failures=tally.gated_failures,
            gated_introduced_failures=tally.gated_introduced_failures,
        )

    @property
    def checked(self) -> int:
        """Pairs the contract judged (pass + fail)."""
        return self.passed + self.failed

    @property
    def nothing_audited(self) -> bool:
        """No pair could be checked: exit 2 whatever the gates say. An incremental run that found
        nothing new (no record read, something skipped or held back) audited everything there was;
        so did a run over logs a source read whose valid lines hold no compaction (sessions that
        never compacted: the log was seen, and there was nothing to judge)."""
        if self.checked == 0 and any(line.other for line in self.sources if line.source != PAIRS):
            return False
        if self.skipped is not None and self.pairs == 0 and not self.not_audited:
            skipped = self.skipped
            return not (skipped.records or skipped.unchanged_inputs or skipped.moved_inputs
                        or skipped.held_back)
        return self.checked == 0

    @property
    def mapping_failed(self) -> bool:
        """`--strict-fields` and a mapped field most records lack: exit 2, committed failed."""
        return self.strict_fields and bool(self.field_warnings)

    @property
    def status(self) -> RunStatus:
        """What the committed run's numbers are worth (`runs.status`)."""
        return RunStatus.FAILED if self.nothing_audited or self.mapping_failed else RunStatus.OK

    @property
    def input_error_rate(self) -> float | None:
        """Input errors over every record read."""
        return _rate(self.input_errors, self.pairs)

    @property
    def failures(self) -> int:
        """Failing pairs that count under `blame` (what the failure gates count), a repeated
        pair id once."""
        if self.blame is Blame.ALL or self.introduced_failures is None:
            return self.failed_once
        return self.introduced_failures

    @property
    def failed_once(self) -> int:
        """Failing pairs, a repeated pair id once (its first record)."""
        return self.failed - self.duplicate_failed

    @property
    def checked_once(self) -> int:
        """Pairs the contract judged (pass + fail), a repeated pair id once: the rates' unit."""
        return self.passed - self.duplicate_passed + self.failed_once

    @property
    def inherited_failures(self) -> int:
        """Failing pairs that do not count under `blame`: every error already in before (a
        repeated pair id once)."""
        return self.failed_once - self.failures

    @property
    def failure_rate(self) -> float | None:
        """Failures (under `blame`) over pairs that could be checked (input errors excluded), a
        repeated pair id counted once (its first record)."""
        return _rate(self.failures, self.checked_once)

    @property
    def gated_failed(self) -> int:
        """Failures (under `blame`) the gates count: those with a counted error the known-issue
        baseline does not accept (a repeated pair id once)."""
        gated = self.gated_failures if self.blame is Blame.ALL else self.gated_introduced_failures
        return self.failures if gated is None else gated

    @property
    def baseline_accepted_pairs(self) -> int:
        """Failures (under `blame`) whose every counted error the baseline accepts."""
        return self.failures - self.gated_failed

    @property
    def gated_failure_rate(self) -> float | None:
        """`failure_rate` without the pairs the known-issue baseline accepts whole."""
        return _rate(self.gated_failed, self.checked_once)

    @property
    def mutation_score(self) -> float | None:
        return _rate(self.mutants_caught, self.mutants_caught + self.mutants_survived)

    @property
    def slice_verdicts(self) -> SliceVerdicts:
        """The per-check and per-compactor gates' verdicts (`rate_gates.judge`)."""
        return judge(self.failure_rate_gates, self.checked,
                     {c.check: c.gated(self.blame) for c in self.checks},
                     {c.compactor: (c.checked, c.gated_failing(self.blame)) for c in self.compactors},
                     self.min_pairs, self.strict_min_pairs)

    @property
    def not_judged(self) -> tuple[str, ...]:
        """Compactor gates not judged for too few pairs, one line each (none under --fail-on none)."""
        return () if "none" in self.fail_on else self.slice_verdicts.not_judged

    @property
    def gate_failures(self) -> tuple[str, ...]:
        """Why the run fails, one sentence per gate that tripped (empty: no gate failed)."""
        found: list[str] = []
        if self.engine_errors and not self.allow_engine_errors:
            found.append(f"{self.engine_errors} record(s) hit an engine error, a bug"
                         " (--allow-engine-errors to accept)")
        if "none" in self.fail_on:
            return tuple(found)
        if self.not_audited:
            found.append(f"{len(self.not_audited)} shard(s) could not be audited")
        rate = self.gated_failure_rate
        accepted = (f" ({self.baseline_accepted_pairs:,} more accepted by --baseline-findings)"
                    if self.baseline_accepted_pairs else "")
        if self.max_failure_rate is not None:
            if rate is not None and rate > self.max_failure_rate:
                found.append(
                    f"failure rate {rate:.1%} is above --max-failure-rate {self.max_failure_rate:g}"
                    + accepted)
        elif not self.failure_rate_gates and "failures" in self.fail_on and self.gated_failed:
            found.append(f"{self.gated_failed} pair(s) fail the contract (--fail-on failures)"
                         + accepted)
        found.extend(self.slice_verdicts.failures)
        if "survivors" in self.fail_on and self.mutants_survived:
            found.append(f"{self.mutants_survived} mutant(s) survived (--fail-on survivors)")
        if "input-errors" in self.fail_on:
            if self.input_errors:
                found.append(f"{self.input_errors} record(s) could not be read (--fail-on input-errors)")
        elif self.max_input_error_rate is not None:
            errors = self.input_error_rate
            if errors is not None and errors > self.max_input_error_rate:
                found.append(f"input-error rate {errors:.1%} is above --max-input-error-rate"
                             f" {self.max_input_error_rate:g}")
        return tuple(found)

    @property
    def exit_code(self) -> int:
        if self.nothing_audited or self.mapping_failed:
            return EXIT_INPUT_ERROR
        return EXIT_FAIL if self.gate_failures else EXIT_PASS

    @property
    def verdict(self) -> str:
        """The summary's last line: PASS, FAIL: <gates>, or NOTHING AUDITED: <why>."""
        failures = self.gate_failures
        if self.nothing_audited:
            parts = [f"{count:,} {what}" for count, what in (
                (self.input_errors, "input error(s)"),
                (self.engine_errors, "engine error(s)"),
                (len(self.not_audited), "shard(s) not audited"),
            ) if count]
            why = ", ".join(parts) if parts else "the inputs hold no record"
            return f"NOTHING AUDITED: no pair could be checked ({why})" + "".join(
                f"; {reason}" for reason in failures
            )
        if self.mapping_failed:
            names = ", ".join(warning.name for warning in self.field_warnings)
            return (f"MAPPING ERROR (--strict-fields): {names} found in fewer than half the"
                    " records" + "".join(f"; {reason}" for reason in failures))
        return ("FAIL: " + "; ".join(failures)) if failures else "PASS"

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SUMMARY_SCHEMA_VERSION,
            "run_id": self.run_id,
            "out": self.out,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "duration_s": round(self.duration_s, 3),
            "contract_sha256": self.contract_sha256,
            "shards": self.shards,
            "pairs": self.pairs,
            "passed": self.passed,
            "failed": self.failed,
            "introduced_failures": self.introduced_failures,
            "inherited_failures": (None if self.introduced_failures is None
                                   else self.failed_once - self.introduced_failures),
            "blame": str(self.blame),
            "input_errors": self.input_errors,
            "engine_errors": self.engine_errors,
            "duplicates": self.duplicates,
            "failure_rate": self.failure_rate,
            "input_error_rate": self.input_error_rate,
            "mutation": {
                "enabled": self.mutate,
                "caught": self.mutants_caught,
                "survived": self.mutants_survived,
                "skipped": self.mutants_skipped,
                "score": self.mutation_score,
                "budget_pairs": self.budget_pairs,
                "budget_sites_not_judged": self.budget_sites,
            },
            "checks": [
                {"check": c.check, "findings": c.findings, "pairs_affected": c.pairs_affected,
                 "failing_pairs": c.failing(self.blame),
                 "baseline_accepted_pairs": c.failing(self.blame) - c.gated(self.blame)}
                for c in self.checks
            ],
            "compactors": [
                {"compactor": c.compactor, "pairs": c.pairs, "failed": c.failed,
                 "introduced_failed": c.introduced_failed,
                 "input_errors": c.input_errors, "engine_errors": c.engine_errors,
                 "baseline_accepted": c.failing(self.blame) - c.gated_failing(self.blame)}
                for c in self.compactors
            ],
            "operators": [
                {"operator": o.operator, "applicable": o.applicable, "caught": o.caught,
                 "survived": o.survived, "skipped": o.skipped, "survival_rate": o.survival_rate}
                for o in self.operators
            ],
            "repair_out": None if self.repair_out is None else {
                "folder": self.repair_out, "files": self.repaired_files,
                "records": self.repaired_records},
            "notes": list(self.notes),
            "field_warnings": [warning.to_dict() for warning in self.field_warnings],
            "sources": {line.source: line.to_dict() for line in self.sources},
            "lineages": [lineage.to_dict() for lineage in self.lineages],
            "lineages_total": self.lineages_total,
            "incremental": self.skipped.to_dict() if self.skipped is not None else None,
            "input_error_samples": list(self.input_error_samples),
            "engine_error_samples": list(self.engine_error_samples),
            "not_audited": [
                {"shard": n.shard, "reason": n.reason, "records": n.records}
                for n in self.not_audited
            ],
            "gates": {
                "fail_on": list(self.fail_on),
                "max_failure_rate": self.max_failure_rate,
                "failure_rate_gates": [
                    {"check": g.check, "compactor": g.compactor, "rate": g.rate, "spec": g.spec}
                    for g in self.failure_rate_gates],
                "min_pairs": self.min_pairs,
                "strict_min_pairs": self.strict_min_pairs,
                "baseline_findings": self.baseline_findings,
                "max_input_error_rate": self.max_input_error_rate,
                "allow_engine_errors": self.allow_engine_errors,
                "strict_fields": self.strict_fields,
            },
            "gate_failures": list(self.gate_failures),
            "not_judged": list(self.not_judged),
            "baseline_accepted": {"findings": self.baseline_accepted_findings,
                                  "pairs": self.baseline_accepted_pairs},
            "nothing_audited": self.nothing_audited,
            "status": self.status,
            "exit_code": self.exit_code,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_text(self) -> str:
        lines = [f"Run {self.run_id}: {self.pairs:,} pairs audited in {self.duration_s:.1f}s"
                 f" ({self.shards} shard(s)) → {self.out}"]
        rate = self.failure_rate
        lines.append(
            f"  pass {self.passed:,} · fail {self.failed:,}"
            + (f" ({self.inherited_failures:,} only by errors before already held, not counted:"
               " --blame all counts them)" if self.inherited_failures else "")
            + f" · input_error {self.input_errors:,}"
            + (f" · engine_error {self.engine_errors:,}" if self.engine_errors else "")
            + (f" · failure rate {rate:.1%}" if rate is not None else "")
        )
        if self.duplicates:
            lines.append(f"  {self.duplicates:,} duplicate pair id(s): record(s) repeating the"
                         " pair_id of an earlier one, kept with duplicate = true and counted once"
                         " in rates")
        if self.mutate:
            score = self.mutation_score
            lines.append(
                f"  mutants: caught {self.mutants_caught:,} · survived {self.mutants_survived:,}"
                f" · skipped {self.mutants_skipped:,}"
                + (f" · score {score:.1%}" if score is not None else "")
            )
            if self.budget_pairs:
                lines.append(f"  mutation budget: {self.budget_pairs:,} pair(s) over it,"
                             f" {self.budget_sites:,} site(s) sampled out (skipped, reason Budget)")
        blame = self.blame
        failing = [c for c in self.checks if c.failing(blame)][:TOP]
        worst = [c for c in self.compactors if c.failing(blame)][:TOP]
        width = max(
            [len(c.check) for c in failing]
            + [len(c.compactor or "(none)") for c in worst]
            + [len(o.operator) for o in self.operators]
            + [10]
        )
        if failing:
            lines.append("Top failing checks (pairs with an error · findings):")
            lines.extend(
                f"  {c.check:<{width}} {c.failing(blame):>7,} · {c.findings:,}" for c in failing
            )
        if worst:
            lines.append("Top failing compactors (failed / checked):")
            for c in worst:
                lines.append(f"  {c.compactor or '(none)':<{width}} {c.failing(blame):>7,} / {c.checked:,}"
                             f" ({c.failing(blame) / c.checked:.1%})")
        if self.operators:
            lines.append("Mutation operators (survived / applicable):")
            for o in self.operators:
                survival = f"{o.survival_rate:.1%}" if o.survival_rate is not None else "-"
                lines.append(f"  {o.operator:<{width}} {o.survived:>7,} / {o.applicable:,} ({survival})"
                             + (f", {o.skipped:,} skipped" if o.skipped else ""))
        if self.repair_out is not None:
            lines.append(f"  --repair-out: {self.repaired_records:,} repaired after snapshot(s) in"
                         f" {self.repaired_files:,} file(s) written to {self.repair_out}"
                         if self.repaired_records else
                         f"  --repair-out: no failing pair a repair fixes completely; nothing"
                         f" written to {self.repair_out}")
        if self.skipped is not None:
            lines.append(f"  {self.skipped.to_text()}")
        if any(line.source != PAIRS for line in self.sources):
            lines.append("Sources:")
            width = max(len(line.source) for line in self.sources)
            lines.extend(f"  {line.source:<{width}} {line.to_text()}" for line in self.sources)
        if self.lineages:
            shown = self.lineages[:_LINEAGES_SHOWN]
            lines.append(f"Lineages (transitions by classification; {len(shown):,} of"
                         f" {self.lineages_total:,}):")
            for lineage in shown:
                counts = " · ".join(f"{name} {count:,}" for name, count in lineage.counts if count)
                lines.append(f"  {lineage.source} {lineage.session_id}: {counts or 'one call'}")
        if self.field_warnings:
            strict = " (--strict-fields: an input error)" if self.strict_fields else ""
            lines.append(f"MAPPING WARNINGS: mapped fields most records lack{strict}:")
            lines.extend(f"  {warning.to_text()}" for warning in self.field_warnings)
        if self.notes:
            lines.append("Notes:")
            lines.extend(f"  {note}" for note in self.notes)
        if self.input_error_samples:
            lines.append(f"Input errors (first {len(self.input_error_samples)} of {self.input_errors:,}):")
            lines.extend(f"  {reason}" for reason in self.input_error_samples)
        if self.engine_error_samples:
            lines.append(f"ENGINE ERRORS, a bug (first {len(self.engine_error_samples)}"
                         f" of {self.engine_errors:,}):")
            lines.extend(f"  {reason}" for reason in self.engine_error_samples)
        if self.not_audited:
            lines.append(f"NOT AUDITED ({len(self.not_audited)} shard(s)):")
            for item in self.not_audited:
                count = f"{item.records:,} record(s)" if item.records is not None else "records"
                lines.append(f"  {item.shard}: {count} not audited: {item.reason}")
        if self.baseline_findings is not None:
            lines.append(f"Baseline ({self.baseline_findings}): {self.baseline_accepted_findings:,}"
                         f" error finding(s) accepted, {self.baseline_accepted_pairs:,} failing"
                         " pair(s) accepted whole; the gates do not count them")
        lines.extend(self.not_judged)
        if (self.nothing_audited or self.mapping_failed) and self.pairs:
            lines.append(f"The run is committed as failed, so its rows say why: stats, trend and"
                         f" report leave it out (`runs --delete {self.run_id}` removes it).")
        lines.append(self.verdict)
        return "\n".join(lines)


def _missing_field_notes(tally: Tally) -> list[str]:
    """One hint per field that at least half the records lacked (a field map pointing at the
    wrong place, not one broken record): what the records have, and how to map it."""
    notes = []
    for name in sorted(tally.missing_fields):
        if 2 * tally.missing_counts.get(name, 0) < tally.pairs:
            continue
        keys = tally.missing_fields[name]
        have = ", ".join(keys) if keys else "no keys at all"
        notes.append(f"records lack `{name}`; the first such record has top-level keys: {have}."
                     f" If {name} lives elsewhere, map it: --field {name}=PATH (a dotted path)")
    return notes


def _source_line(name: str, row: list[int], classifications: dict[str, int]) -> SourceLine:
    """One source's counts in `SOURCE_COUNTS` order, its classifications in their order."""
    files, lines, events, other, problems, blank, calls = row
    return SourceLine(
        name, files, lines, events, other, problems, blank, calls,
        classifications=tuple(sorted(classifications.items(), key=lambda item: _order(item[0]))),
    )
