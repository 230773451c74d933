"""Mutant outcomes and the `MutationReport` that owns the mutation verdict and exit code.

A mutation run is judged by three numbers: mutants caught, survived and skipped. Only caught
and survived mutants are *applicable*; the score is caught / applicable, and it is `None`
(not measured) when nothing applied, because a contract that was never challenged has no score.
The JSON layout is a promise to users (schema_version 1); `caught_by` is kept on the
Python value for the corpus tables but is not part of that JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from frayproof_audit.report import EXIT_FAIL, EXIT_PASS, SCHEMA_VERSION, Report

CAUGHT = "caught"
SURVIVED = "survived"
SKIPPED = "skipped"
STATUSES = (CAUGHT, SURVIVED, SKIPPED)

BASELINE_PASS_LINE = "BASELINE PASS: the real output satisfies the contract."
BASELINE_FAIL_LINE = "BASELINE FAIL: the real output breaks the contract, so no mutants were run."
NO_COVERAGE_LINE = "No mutant applied to this output: the contract's coverage was not measured."


@dataclass(frozen=True, slots=True)
class MutantOutcome:
    """One distinct mutant (or one skip entry) and what the contract said about it.

    `sites` lists every place that produced this same mutant (identical mutants within an
    operator are merged). `caught_by` names the checks with an error finding, in order of first
    appearance; it is empty unless `status` is "caught". Skip entries have no index, no sites
    and no report.
    """

    operator: str
    description: str
    status: str
    message_index: int | None
    sites: tuple[str, ...]
    reason: str
    caught_by: tuple[str, ...] = ()
    report: Report | None = None
    budget_skipped: int = 0
    """For the skip entry of an operator the budget cut short: its sites not judged (the corpus
    tally counts them; not part of the JSON, whose `reason` says it)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.operator,
            "description": self.description,
            "status": self.status,
            "message_index": self.message_index,
            "sites": list(self.sites),
            "reason": self.reason,
            "report": self.report.to_dict() if self.report is not None else None,
        }

    def to_text(self) -> str:
        sites = f" [{', '.join(self.sites)}]" if self.sites else ""
        return f"{self.status.upper()} {self.operator}{sites}: {self.reason}"


@dataclass(frozen=True, slots=True)
class MutationReport:
    """The baseline report of the real output and one outcome per distinct mutant.

    A failed baseline means no mutants were built: the output itself breaks the contract, so
    measuring how the contract reacts to corruptions of it would mean nothing.
    """

    baseline: Report
    mutants: tuple[MutantOutcome, ...] = ()

    def _count(self, status: str) -> int:
        return sum(1 for mutant in self.mutants if mutant.status == status)

    @property
    def caught(self) -> int:
        return self._count(CAUGHT)

    @property
    def survived(self) -> int:
        return self._count(SURVIVED)

    @property
    def skipped(self) -> int:
        return self._count(SKIPPED)

    @property
    def applicable(self) -> int:
        return self.caught + self.survived

    @property
    def score_percent(self) -> float | None:
        """`round(100 * caught / applicable, 2)` (binary float rounding, as frayproof), or None."""
        applicable = self.applicable
        if not applicable:
            return None
        return round(100 * self.caught / applicable, 2)

    @property
    def passed(self) -> bool:
        """The baseline passed, something applied, and every applicable mutant was caught."""
        return self.baseline.passed and self.applicable > 0 and self.survived == 0

    @property
    def exit_code(self) -> int:
        return EXIT_PASS if self.passed else EXIT_FAIL

    @property
    def operators(self) -> dict[str, dict[str, int]]:
        """Per-operator counts, in operator order (empty after a failed baseline)."""
        groups: dict[str, dict[str, int]] = {}
        for mutant in self.mutants:
            counts = groups.setdefault(mutant.operator, {status: 0 for status in STATUSES})
            counts[mutant.status] += 1
        return groups

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": "mutation",
            "passed": self.passed,
            "baseline": self.baseline.to_dict(),
            "caught": self.caught,
            "survived": self.survived,
            "skipped": self.skipped,
            "applicable": self.applicable,
            "score_percent": self.score_percent,
            "operators": self.operators,
            "mutants": [mutant.to_dict() for mutant in self.mutants],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, ensure_ascii=False)

    def to_text(self) -> str:
        if not self.baseline.passed:
            return f"{BASELINE_FAIL_LINE}\n{self.baseline.to_text()}"
        score = self.score_percent
        shown = f"{score:.2f}%" if score is not None else "not measured"
        lines = [
            BASELINE_PASS_LINE,
            f"MUTATION SCORE: {self.caught}/{self.applicable} caught ({shown}); "
            f"{self.survived} survived, {self.skipped} skipped.",
        ]
        if not self.applicable:
            lines.append(NO_COVERAGE_LINE)
        lines.extend(mutant.to_text() for mutant in self.mutants)
        return "\n".join(lines)
