"""Small running totals a worker keeps per shard and the parent merges into the run summary.

They let the summary print the top failing checks, compactors and operators without the parent
ever re-reading the tables it just wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from frayproof_audit.corpus.store.pair_status import PairStatus

MAX_SAMPLES = 10


@dataclass(slots=True)
class Tally:
    """Counters for a shard or a whole run. Mutable while counting; merged with `add`."""

    pairs: int = 0
    passed: int = 0
    failed: int = 0
    input_errors: int = 0
    engine_errors: int = 0
    mutants_caught: int = 0
    mutants_survived: int = 0
    mutants_skipped: int = 0
    budget_pairs: int = 0
    """Pairs with more mutation sites than the per-pair budget (some sites not judged)."""
    budget_sites: int = 0
    """Mutation sites the budget left unjudged, over all pairs."""
    checks: dict[str, list[int]] = field(default_factory=dict)
    """check → [findings, pairs_affected, failing_pairs]: findings of the check, pairs with any
    finding of it, pairs with an error finding of it (the names of `CheckLine` and `stats`)."""
    compactors: dict[str, list[int]] = field(default_factory=dict)
    """compactor ("" for none) → [pairs, failed, input errors, engine errors]"""
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

    def note_missing(self, name: str, keys: tuple[str, ...]) -> None:
        self.missing_fields.setdefault(name, list(keys))
        self.missing_counts[name] = self.missing_counts.get(name, 0) + 1

    def count_pair(self, status: PairStatus, compactor: str | None) -> None:
        self.pairs += 1
        row = self.compactors.setdefault(compactor or "", [0, 0, 0, 0])
        row[0] += 1
        if status is PairStatus.PASS:
            self.passed += 1
        elif status is PairStatus.FAIL:
            self.failed += 1
            row[1] += 1
        elif status is PairStatus.ENGINE_ERROR:
            self.engine_errors += 1
            row[3] += 1
        else:
            self.input_errors += 1
            row[2] += 1

    def count_check(self, check: str, findings: int, errors: int) -> None:
        row = self.checks.setdefault(check, [0, 0, 0])
        row[0] += findings
        row[1] += 1
        row[2] += 1 if errors else 0

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

    def count_budget(self, not_judged: int) -> None:
        """A pair whose budget left `not_judged` sites out."""
        self.budget_pairs += 1
        self.budget_sites += not_judged

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
        self.input_errors += other.input_errors
        self.engine_errors += other.engine_errors
        self.mutants_caught += other.mutants_caught
        self.mutants_survived += other.mutants_survived
        self.mutants_skipped += other.mutants_skipped
        self.budget_pairs += other.budget_pairs
        self.budget_sites += other.budget_sites
        for name, keys in other.missing_fields.items():
            self.missing_fields.setdefault(name, keys)
            self.missing_counts[name] = self.missing_counts.get(name, 0) + other.missing_counts.get(name, 0)
        for mine, theirs in (
            (self.checks, other.checks),
            (self.compactors, other.compactors),
            (self.operators, other.operators),
        ):
            for key, values in theirs.items():
                row = mine.setdefault(key, [0] * len(values))
                for index, value in enumerate(values):
                    row[index] += value
