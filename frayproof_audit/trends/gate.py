"""The regression gate: is the latest period worse than its baseline, beyond doubt?

A series (an operator's survival rate, a check's failure rate) regresses in the latest period
when all three hold:

1. it is worse than its baseline by more than `points` percentage points;
2. the baseline lies below the period's 95% Wilson interval (`beyond_noise`): the change is
   more than that night's noise;
3. the period judged at least `min_pairs` pairs for it: no interval makes three pairs a
   decision, so a tiny night is shown, never gated on.

Only checks and operators gate; condition codes are there to explain which way a check fails.
`GateResult` owns the exit code (0 or 1), as `RunSummary` does for `audit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from frayproof_audit.report import EXIT_FAIL, EXIT_PASS
from frayproof_audit.trends.series import Trend, TrendError, as_text

DEFAULT_MIN_PAIRS = 20
"""Pairs a series needs in the latest period before the gate judges it."""


@dataclass(frozen=True, slots=True)
class Regression:
    """One series worse than its baseline in the latest period."""

    kind: str
    """`operator` (survival rate) or `check` (failure rate)."""
    name: str
    period: str
    rate: float
    baseline: float
    low: float
    high: float
    pairs: int

    @property
    def change_points(self) -> float:
        return 100 * (self.rate - self.baseline)

    def describe(self) -> str:
        what = "survival" if self.kind == "operator" else "failure rate"
        return (f"{self.kind} {self.name}: {what} {self.rate:.1%} on {self.period}"
                f" (95% interval {self.low:.1%}–{self.high:.1%}, {self.pairs} pairs)"
                f" vs baseline {self.baseline:.1%}: {self.change_points:+.1f} points")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "period": self.period, "rate": self.rate,
                "baseline": self.baseline, "low": self.low, "high": self.high,
                "pairs": self.pairs, "change_points": round(self.change_points, 6)}


@dataclass(frozen=True, slots=True)
class GateResult:
    """The gate's verdict on the latest period."""

    points: float
    min_pairs: int
    period: str | None
    regressions: tuple[Regression, ...]
    too_few_pairs: tuple[str, ...]
    """Series worse by more than `points` that were not judged: fewer than `min_pairs` pairs."""
    baselined: bool = True
    """Whether any series had a baseline in the latest period (not on the first one)."""
    first_of_contract: bool = False
    """The latest period is the first its contract judged (`Trend.first_of_contract`)."""

    @property
    def exit_code(self) -> int:
        return EXIT_FAIL if self.regressions else EXIT_PASS

    def to_text(self) -> str:
        if not self.baselined and self.first_of_contract:
            lines = [f"Gate passed: {self.period} is the first period judged by its contract, there"
                     " is no baseline yet (rejudge the older runs with it to keep one)."]
        elif not self.baselined:
            lines = [f"Gate passed: {self.period} is the first period, there is no baseline yet."]
        elif not self.regressions:
            lines = [f"Gate passed: nothing on {self.period} is worse than its baseline by more"
                     f" than {self.points:g} points beyond noise."]
        else:
            lines = [f"REGRESSION on {self.period}: {len(self.regressions)} series worse than"
                     f" baseline by more than {self.points:g} points beyond noise"]
            lines += [f"  {regression.describe()}" for regression in self.regressions]
        if self.too_few_pairs:
            lines.append(f"  not judged (fewer than {self.min_pairs} pairs): "
                         + ", ".join(self.too_few_pairs))
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"points": self.points, "min_pairs": self.min_pairs, "period": self.period,
                "passed": not self.regressions, "baselined": self.baselined,
                "first_of_contract": self.first_of_contract,
                "regressions": [r.to_dict() for r in self.regressions],
                "too_few_pairs": list(self.too_few_pairs)}


def find_regressions(trend: Trend, points: float, min_pairs: int = DEFAULT_MIN_PAIRS) -> GateResult:
    """Judge `trend`'s latest period (see the module docstring)."""
    if points < 0:
        raise TrendError(f"--fail-on-regression must be 0 points or more, not {points:g}")
    if min_pairs < 1:
        raise TrendError(f"--min-pairs must be at least 1, not {min_pairs}")
    latest = trend.latest
    found: list[Regression] = []
    small: list[str] = []
    for kind, frame, name, size in (("check", trend.checks, "check", "pairs_checked"),
                                    ("operator", trend.operators, "operator", "pairs")):
        worse = frame.filter(
            (pl.col(trend.period) == latest) & pl.col("change").is_not_null()
            & (pl.col("change") * 100 > points)
        )
        for row in worse.iter_rows(named=True):
            if row[size] < min_pairs:
                small.append(f"{kind} {row[name]} ({row[size]} pairs)")
            elif row["beyond_noise"]:
                found.append(Regression(kind, row[name], as_text(latest), row["rate"],
                                        row["baseline"], row["low"], row["high"], row[size]))
    baselined = any(
        frame.filter((pl.col(trend.period) == latest) & pl.col("baseline").is_not_null()).height
        for frame in (trend.checks, trend.operators))
    return GateResult(points, min_pairs, None if latest is None else as_text(latest),
                      tuple(found), tuple(small), baselined, trend.first_of_contract)
