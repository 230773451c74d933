"""Small running totals a worker keeps per shard and the parent merges into the run summary.

They let the summary print the top failing checks, compactors and operators without the parent
ever re-reading the tables it just wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from frayproof_audit.corpus.store.failure_rule import Blame, counts_as_failure
from frayproof_audit.corpus.store.pair_status import PairStatus

if TYPE_CHECKING:
    from frayproof_audit.sources import Counts, Lineage

MAX_SAMPLES = 10
MAX_LINEAGES = 100
"""Lineages (conversations of a request log) whose classification counts a run summary lists."""
COMPACTOR_COUNTS = 9
"""The length of a `Tally.compactors` row."""
SOURCE_COUNTS = ("files", "lines", "events", "other", "problems", "blank", "calls")
PAIRS = "pairs"


@dataclass(slots=True)
class Tally:
    """Counters for a shard or a whole run. Mutable while counting; merged with `add`."""

    pairs: int = 0
    passed: int = 0
    failed: int = 0
    introduced_failures: int = 0
    """Failing pairs whose compactor introduced an error (`store.failure_rule`, `--blame introduced`)."""
    input_errors: int = 0
    engine_errors: int = 0
    mutants_caught: int = 0
    mutants_survived: int = 0
    mutants_skipped: int = 0
    budget_pairs: int = 0
    """Pairs with more mutation sites than the per-pair budget (some sites not judged)."""
    budget_sites: int = 0
    """Mutation sites the budget left unjudged, over all pairs."""
    baseline_findings: int = 0
    """Error findings a known-issue baseline accepts (`--baseline-findings`)."""
    gated_failures: int = 0
    """Failing pairs with an error finding the baseline does not accept (`--blame all`)."""
    gated_introduced_failures: int = 0
    """Failing pairs with an introduced error finding the baseline does not accept (the gates'
    count under `--blame introduced`)."""
    checks: dict[str, list[int]] = field(default_factory=dict)
    """check → [findings, pairs_affected, failing_pairs, introduced_failing_pairs, gated_pairs,
    gated_introduced_pairs]: findings of the check, pairs with any finding of it, pairs with an
    error finding of it, pairs with an error finding of it the compactor introduced (the names of
    `CheckLine` and `stats`), and of each kind of failing pair, those with an error finding of it
    the known-issue baseline does not accept (what its gates count under `--blame all` and
    `--blame introduced`)."""
    compactors: dict[str, list[int]] = field(default_factory=dict)
    """compactor ("" for none) → [pairs, failed, input errors, engine errors, introduced failures,
    gated failures, gated introduced failures, repeated, repeated failed] (pairs and failed count
    records; gated: an error the baseline does not accept; repeated: records checked whose pair
    id an earlier record had, and of those the failing ones, which no rate counts twice)"""
    operators: dict[str, list[int]] = field(default_factory=dict)
    """operator → [caught, survived, skipped]"""
    samples: list[str] = field(default_factory=list)
    """The first input-error reasons, in record order."""
    engine_samples: list[str] = field(default_factory=list)
    """The first engine errors, in record order."""
    missing_fields: dict[str, list[str]] = field(default_factory=dict)
    """A field (`before`/`after`) some records lack → the top-level keys of the first of them."""
    missing_counts: dict[str, int] = field(default_factory=dict)
    """How many records lacked each such field."""
    sources: dict[str, list[int]] = field(default_factory=dict)
    """source → [files, lines, events, other, problems, blank, calls] (`SOURCE_COUNTS`): what
    the files a source read held (`sources.Counts`); `pairs` counts its files and records."""
    classifications: dict[str, dict[str, int]] = field(default_factory=dict)
    """Request-log source → how many transitions got each classification, over its lineages."""
    lineages: list[tuple[str, str, str, tuple[tuple[str, int], ...]]] = field(default_factory=list)
    """The first `MAX_LINEAGES` lineages: (file, session id, grouped by, classification counts)."""
    lineages_total: int = 0
    source_notes: list[str] = field(default_factory=list)
    """What the sources could not know about the files they read, each once (`MAX_SAMPLES`)."""
    repaired_files: int = 0
    repaired_records: int = 0
    """`--repair-out`: the files written and the repaired snapshots (lines) they hold."""
    duplicates: dict[str, int] = field(default_factory=dict)
    """Pair status → records whose pair_id an earlier record of the run had (`duplicate`)."""
    watched_records: int = 0
    """Records read as objects whose mapped fields were looked for (`field_watch`)."""
    watched_found: dict[str, int] = field(default_factory=dict)
    """A watched field → how many of those records held it."""
    watched_missing: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    """A watched field → where its path stopped matching the first record lacking it, and the
    keys there (`record_fields.nearest_keys`)."""

    def note_missing(self, name: str, keys: tuple[str, ...]) -> None:
        self.missing_fields.setdefault(name, list(keys))
        self.missing_counts[name] = self.missing_counts.get(name, 0) + 1

    def count_pair(self, status: PairStatus, compactor: str | None,
                   introduced_errors: int | None = None,
                   gated: tuple[bool, bool] | None = None, duplicate: bool = False) -> None:
        """One pair; `gated`: whether a gate counts it under `--blame all` and `introduced`
        (None: as its status and blame say, no baseline). A `duplicate` (its pair_id an earlier
        record of the run had) is counted by status apart, and as no failure of the gates'."""
        self.pairs += 1
        row = self.compactors.setdefault(compactor or "", [0] * COMPACTOR_COUNTS)
        if duplicate:
            self._count_repeat(status, row)
            gated = (False, False)
        row[0] += 1
        if status is PairStatus.PASS:
            self.passed += 1
        elif status is PairStatus.FAIL:
            self.failed += 1
            row[1] += 1
            introduced = not duplicate and counts_as_failure(status, introduced_errors, Blame.INTRODUCED)
            if introduced:
                self.introduced_failures += 1
                row[4] += 1
            gated_all, gated_introduced = (True, introduced) if gated is None else gated
            self.gated_failures += gated_all
            self.gated_introduced_failures += gated_introduced
            row[5] += gated_all
            row[6] += gated_introduced
        elif status is PairStatus.ENGINE_ERROR:
            self.engine_errors += 1
            row[3] += 1
        else:
            self.input_errors += 1
            row[2] += 1

    def uncount_repeat(self, status: str, compactor: str | None, introduced_errors: int | None,
                       gated_all: bool, gated_introduced: bool) -> None:
        """A record found, after its shard counted it, to repeat the pair id of an earlier
        shard's: from then on counted as `count_pair(..., duplicate=True)` would have (by status
        apart, no failure of blame's nor of the gates'). `gated_*`: whether its worker counted
        it for the gates, as `count_pair` was told."""
        row = self.compactors[compactor or ""]
        self._count_repeat(status, row)
        if status != PairStatus.FAIL:
            return
        if counts_as_failure(status, introduced_errors, Blame.INTRODUCED):
            self.introduced_failures -= 1
            row[4] -= 1
        self.gated_failures -= gated_all
        self.gated_introduced_failures -= gated_introduced
        row[5] -= gated_all
        row[6] -= gated_introduced

    def _count_repeat(self, status: str, row: list[int]) -> None:
        self.duplicates[status] = self.duplicates.get(status, 0) + 1
        if status == PairStatus.PASS or status == PairStatus.FAIL:
            row[7] += 1
            row[8] += status == PairStatus.FAIL

    def count_source(self, source: str, counts: Counts | None, lineages: tuple[Lineage, ...] = (),
                     path: str = "", notes: tuple[str, ...] = ()) -> None:
        """A file (or part of one) a source read, with what it held (None: unreadable)."""
        row = self.sources.setdefault(source, [0] * len(SOURCE_COUNTS))
        row[0] += 1
        if counts is not None:
            for index, name in enumerate(SOURCE_COUNTS[1:], 1):
                row[index] += getattr(counts, name)
        for lineage in lineages:
            totals = self.classifications.setdefault(source, {})
            for name, count in lineage.counts:
                totals[name] = totals.get(name, 0) + count
            self.lineages_total += 1
            if len(self.lineages) < MAX_LINEAGES:
                self.lineages.append((path, lineage.session_id, lineage.grouped_by, lineage.counts))
        for note in notes:
            if note not in self.source_notes and len(self.source_notes) < MAX_SAMPLES:
                self.source_notes.append(note)

    def count_records(self, first: bool, records: int) -> None:
        """A shard of a file of pair records (`first`: the shard that starts the file)."""
        row = self.sources.setdefault(PAIRS, [0] * len(SOURCE_COUNTS))
        row[0] += first
        row[1] += records
        row[2] += records

    def count_check(self, check: str, findings: int, errors: int, introduced: int | None = None,
                    accepted: int = 0, accepted_introduced: int = 0) -> None:
        """One pair's findings of `check`: how many, how many errors, how many of those the
        compactor introduced (None: not known, all of them, as `counts_as_failure` reads it),
        and how many of each the known-issue baseline lists."""
        row = self.checks.setdefault(check, [0, 0, 0, 0, 0, 0])
        row[0] += findings
        row[1] += 1
        row[2] += 1 if errors else 0
        counted = errors if introduced is None else introduced
        row[3] += 1 if counted else 0
        row[4] += 1 if errors > accepted else 0
        row[5] += 1 if counted > (accepted if introduced is None else accepted_introduced) else 0
        self.baseline_findings += accepted

    def count_mutant(self, operator: str, status: str) -> None:
        row = self.operators.setdefault(operator, [0, 0, 0])
        if status == "caught":
            self.mutants_caught += 1
            row[0] += 1
        elif status == "survived":
            self.mutants_survived += 1
            row[1] += 1
        else:
            self.mutants_skipped += 1
            row[2] += 1

    def uncount_check(self, check: str, findings: int, errors: int, introduced: int,
                      accepted: int = 0, accepted_introduced: int = 0) -> None:
        """Take back `count_check` with the same numbers (a pair found to repeat an earlier
        shard's pair id)."""
        row = self.checks[check]
        row[0] -= findings
        row[1] -= 1
        row[2] -= 1 if errors else 0
        row[3] -= 1 if introduced else 0
        row[4] -= 1 if errors > accepted else 0
        row[5] -= 1 if introduced > accepted_introduced else 0
        self.baseline_findings -= accepted

    def uncount_mutant(self, operator: str, status: str) -> None:
        """Take back `count_mutant` (a mutant of a repeated pair id's record)."""
        row = self.operators[operator]
        if status == "caught":
            self.mutants_caught -= 1
            row[0] -= 1
        elif status == "survived":
            self.mutants_survived -= 1
            row[1] -= 1
        else:
            self.mutants_skipped -= 1
            row[2] -= 1

    def count_budget(self, not_judged: int) -> None:
        """A pair whose budget left `not_judged` sites out."""
        self.budget_pairs += 1
        self.budget_sites += not_judged

    def uncount_budget(self, not_judged: int) -> None:
        """Take back `count_budget` (a pair found to repeat an earlier shard's pair id)."""
        self.budget_pairs -= 1
        self.budget_sites -= not_judged

    def sample(self, reason: str) -> None:
        if len(self.samples) < MAX_SAMPLES:
            self.samples.append(reason)

    def sample_engine_error(self, reason: str) -> None:
        if len(self.engine_samples) < MAX_SAMPLES:
            self.engine_samples.append(reason)

    def add(self, other: Tally) -> None:
        """Merge another tally (samples are merged by the caller, in shard order)."""
        self.pairs += other.pairs
        self.passed += other.passed
        self.failed += other.failed
        self.introduced_failures += other.introduced_failures
        self.input_errors += other.input_errors
        self.engine_errors += other.engine_errors
        self.mutants_caught += other.mutants_caught
        self.mutants_survived += other.mutants_survived
        self.mutants_skipped += other.mutants_skipped
        self.budget_pairs += other.budget_pairs
        self.budget_sites += other.budget_sites
        self.baseline_findings += other.baseline_findings
        self.gated_failures += other.gated_failures
        self.gated_introduced_failures += other.gated_introduced_failures
        for name, keys in other.missing_fields.items():
            self.missing_fields.setdefault(name, keys)
            self.missing_counts[name] = self.missing_counts.get(name, 0) + other.missing_counts.get(name, 0)
        self.repaired_files += other.repaired_files
        self.repaired_records += other.repaired_records
        for status, count in other.duplicates.items():
            self.duplicates[status] = self.duplicates.get(status, 0) + count
        self.watched_records += other.watched_records
        for name, count in other.watched_found.items():
            self.watched_found[name] = self.watched_found.get(name, 0) + count
        for name, where in other.watched_missing.items():
            self.watched_missing.setdefault(name, where)
        for source, totals in other.classifications.items():
            mine_totals = self.classifications.setdefault(source, {})
            for name, count in totals.items():
                mine_totals[name] = mine_totals.get(name, 0) + count
        room = MAX_LINEAGES - len(self.lineages)
        self.lineages.extend(other.lineages[:max(0, room)])
        self.lineages_total += other.lineages_total
        for note in other.source_notes:
            if note not in self.source_notes and len(self.source_notes) < MAX_SAMPLES:
                self.source_notes.append(note)
        for mine, theirs in (
            (self.checks, other.checks),
            (self.compactors, other.compactors),
            (self.operators, other.operators),
            (self.sources, other.sources),
        ):
            for key, values in theirs.items():
                row = mine.setdefault(key, [0] * len(values))
                for index, value in enumerate(values):
                    row[index] += value
