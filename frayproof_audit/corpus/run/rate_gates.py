"""Failure-rate gates per check and per compactor (`audit --max-failure-rate NAME=R`).

Beside the run's global `--max-failure-rate R`, a gate can hold one check or one compactor to
its own rate, so a regression in one of them cannot hide in the average of all:

* `CHECK=R` — pairs with an error finding of CHECK / pairs checked, over the whole run;
* `compactor:NAME=R` — failed / checked pairs of that compactor only. A compactor is a slice
  of the run: one with fewer than `min_pairs` checked pairs is not judged (a rate of 3 pairs is
  no decision), and says so; with `strict_min_pairs` a slice that would have tripped on too few
  pairs fails the run instead.

Findings a known-issue baseline accepts (`--baseline-findings`) do not count here: a pair fails
a gate only by an error finding the baseline does not list. The sentences are `RunSummary`'s
`gate_failures`; the exit code stays its own.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from frayproof_audit.corpus.inputs.field_map import ConfigError

COMPACTOR_PREFIX = "compactor:"
DEFAULT_MIN_PAIRS = 20
"""Checked pairs a compactor needs in the run before its own gate judges it (as `trend`'s)."""


@dataclass(frozen=True, slots=True)
class FailureRateGate:
    """One check's or one compactor's failure rate may not exceed `rate` (exactly one is named)."""

    rate: float
    check: str | None = None
    compactor: str | None = None

    def __post_init__(self) -> None:
        if (self.check is None) == (self.compactor is None):
            raise ConfigError("a failure-rate gate names exactly one check or one compactor")
        if not (isinstance(self.rate, int | float) and math.isfinite(self.rate)
                and 0.0 <= self.rate <= 1.0):
            raise ConfigError(f"--max-failure-rate {self.subject}: the rate must be between 0 and 1")
        if self.check is not None:
            from frayproof_audit.checks import CHECK_NAMES

            if self.check not in CHECK_NAMES:
                raise ConfigError(f"--max-failure-rate: unknown check {self.check!r} (choose"
                                  f" {', '.join(CHECK_NAMES)}, or compactor:NAME for a compactor)")
        elif not self.compactor:
            raise ConfigError("--max-failure-rate compactor:NAME=R needs a compactor name")

    @property
    def subject(self) -> str:
        """`retention` or `compactor:summarize`: what the spec names."""
        return self.check if self.check is not None else f"{COMPACTOR_PREFIX}{self.compactor}"

    @property
    def spec(self) -> str:
        """The option value that gives this gate back (`retention=0.05`)."""
        return f"{self.subject}={self.rate:g}"


def parse_failure_rate(text: str) -> float | FailureRateGate:
    """`R` (the whole run's rate), `CHECK=R` or `compactor:NAME=R`, as `--max-failure-rate`
    takes it."""
    subject, equals, number = text.rpartition("=")
    try:
        rate = float(number)
    except ValueError:
        raise ConfigError(f"--max-failure-rate {text!r}: {number!r} is not a rate") from None
    return gate_for(subject, rate) if equals else rate


def gate_for(subject: str, rate: float) -> FailureRateGate:
    """The gate `SUBJECT=RATE` names: `compactor:NAME`, or a check's name."""
    subject = subject.strip()
    if subject.startswith(COMPACTOR_PREFIX):
        return FailureRateGate(rate, compactor=subject[len(COMPACTOR_PREFIX):])
    if not subject:
        raise ConfigError("--max-failure-rate NAME=RATE: name a check or compactor:NAME before '='")
    return FailureRateGate(rate, check=subject)


@dataclass(frozen=True, slots=True)
class SliceVerdicts:
    """What the per-check and per-compactor gates found: the gates that tripped, and the slices
    not judged for too few pairs (one line each)."""

    failures: tuple[str, ...]
    not_judged: tuple[str, ...]


def judge(gates: Iterable[FailureRateGate], checked: int, failing_by_check: Mapping[str, int],
          compactors: Mapping[str | None, tuple[int, int]], min_pairs: int,
          strict: bool) -> SliceVerdicts:
    """Each gate against the run's counts: `checked` pairs, each check's failing pairs, each
    compactor's (checked, failed) pairs, the baseline's accepted pairs already left out."""
    failures: list[str] = []
    not_judged: list[str] = []
    for gate in gates:
        if gate.check is not None:
            failing = failing_by_check.get(gate.check, 0)
            if checked and failing / checked > gate.rate:
                failures.append(f"check {gate.check}: failure rate {failing / checked:.1%}"
                                f" ({failing:,} / {checked:,} pairs) is above"
                                f" --max-failure-rate {gate.spec}")
            continue
        pairs, failing = compactors.get(gate.compactor, (0, 0))
        if pairs and pairs >= min_pairs:
            if failing / pairs > gate.rate:
                failures.append(f"compactor {gate.compactor}: failure rate {failing / pairs:.1%}"
                                f" ({failing:,} / {pairs:,} pairs) is above"
                                f" --max-failure-rate {gate.spec}")
            continue
        shown = f", failure rate {failing / pairs:.1%}" if pairs else ""
        not_judged.append(f"compactor {gate.compactor}: not judged: {pairs:,} pairs < {min_pairs:,}"
                          f" (--min-pairs{shown})")
        if strict:
            failures.append(f"compactor {gate.compactor}: not judged, {pairs:,} pairs <"
                            f" --min-pairs {min_pairs:,} (--strict-min-pairs)")
    return SliceVerdicts(tuple(failures), tuple(not_judged))
