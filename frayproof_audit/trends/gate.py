"""The regression gate: is the latest period worse than its baseline, beyond doubt?

A series (an operator's survival rate, a check's failure rate) regresses in the latest period
when all three hold:

1. it is worse than its baseline by more than `points` percentage points;
2. the baseline lies below the period's 95% Wilson interval (`beyond_noise`): the change is
   more than that night's noise;
3. the period judged at least `min_pairs` pairs for it: no interval makes three pairs a
   decision, so a tiny night is shown, never gated on.

Only checks and operators gate; condition codes are there to explain which way a check fails.
A series worse by more than `points` on too few pairs is listed as not judged, one line each;
with `strict` (`--strict-min-pairs`) it fails the gate instead.

Slices (`--by compactor`, or any other column of `pairs`): each value of the column that has
pairs in the latest period is a trend of its own (`TrendConfig.where`), gated on its own, so a
regression of one compactor cannot hide in the average of all; the gate fails when the whole
or any slice does, naming each slice. `GateResult` owns the exit code (0 or 1), as
`RunSummary` does for `audit`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.report import EXIT_FAIL, EXIT_PASS
from frayproof_audit.trends.series import Trend, TrendConfig, TrendError, as_text, compute_trend

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
class NotJudged:
    """A series worse by more than the points asked, on fewer pairs than `--min-pairs`."""

    kind: str
    name: str
    pairs: int

    def describe(self, min_pairs: int) -> str:
        return f"{self.kind} {self.name}: not judged: {self.pairs} pairs < {min_pairs} (--min-pairs)"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "pairs": self.pairs}


@dataclass(frozen=True, slots=True)
class SliceGate:
    """The gate's verdict on one slice: the pairs whose `by` column holds `value`."""

    value: str | None
    gate: GateResult

    @property
    def label(self) -> str:
        return "(none)" if self.value is None else self.value


@dataclass(frozen=True, slots=True)
class GateResult:
    """The gate's verdict on the latest period, of the whole and of each slice."""

    points: float
    min_pairs: int
    period: str | None
    regressions: tuple[Regression, ...]
    too_few_pairs: tuple[NotJudged, ...]
    """Series worse by more than `points` that were not judged: fewer than `min_pairs` pairs."""
    baselined: bool = True
    """Whether any series had a baseline in the latest period (not on the first one)."""
    first_of_contract: bool = False
    """The latest period is the first its contract judged (`Trend.first_of_contract`)."""
    strict: bool = False
    """`--strict-min-pairs`: a series not judged for too few pairs fails the gate."""
    by: str | None = None
    """The column the slices are values of (`--by`; None: no slices)."""
    slices: tuple[SliceGate, ...] = ()
    """Each value of `by` with pairs in the latest period, gated on its own."""

    @property
    def own_failed(self) -> bool:
        """This trend (not its slices) fails: a regression, or (strict) a series not judged."""
        return bool(self.regressions) or (self.strict and bool(self.too_few_pairs))

    @property
    def failed_slices(self) -> tuple[SliceGate, ...]:
        return tuple(item for item in self.slices if item.gate.own_failed)

    @property
    def exit_code(self) -> int:
        return EXIT_FAIL if self.own_failed or self.failed_slices else EXIT_PASS

    def to_text(self) -> str:
        lines = [self._own_text()]
        for item in self.slices:
            lines.append(f"{self.by} {item.label}: " + item.gate._own_text())
        if self.by is not None:
            failed = self.failed_slices
            named = ", ".join(item.label + ("" if item.gate.regressions else
                                            " (not judged, --strict-min-pairs)") for item in failed)
            verdict = ("REGRESSION" if any(item.gate.regressions for item in failed)
                       else "GATE FAILED")
            lines.append(
                f"{verdict} in {len(failed)} of {len(self.slices)} {self.by} slice(s): {named}"
                if failed else
                f"Each of {len(self.slices)} {self.by} slice(s) on {self.period} passed the gate.")
        return "\n".join(lines)

    def _own_text(self) -> str:
        if not self.baselined and self.first_of_contract:
            lines = [f"Gate passed: {self.period} is the first period judged by its contract, there"
                     " is no baseline yet (rejudge the older runs with it to keep one)."]
        elif not self.baselined:
            lines = [f"Gate passed: {self.period} is the first period, there is no baseline yet."]
        elif not self.regressions and self.strict and self.too_few_pairs:
            lines = [f"GATE FAILED on {self.period}: {len(self.too_few_pairs)} series worse than"
                     f" baseline by more than {self.points:g} points on too few pairs to judge"
                     " (--strict-min-pairs)"]
        elif not self.regressions:
            lines = [f"Gate passed: nothing on {self.period} is worse than its baseline by more"
                     f" than {self.points:g} points beyond noise."]
        else:
            lines = [f"REGRESSION on {self.period}: {len(self.regressions)} series worse than"
                     f" baseline by more than {self.points:g} points beyond noise"]
            lines += [f"  {regression.describe()}" for regression in self.regressions]
        lines += [f"  {item.describe(self.min_pairs)}"
                  + (", fails with --strict-min-pairs" if self.strict else "")
                  for item in self.too_few_pairs]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"points": self.points, "min_pairs": self.min_pairs,
                 "strict_min_pairs": self.strict, "period": self.period,
                 "passed": self.exit_code == EXIT_PASS, "baselined": self.baselined,
                 "first_of_contract": self.first_of_contract,
                 "regressions": [r.to_dict() for r in self.regressions],
                 "too_few_pairs": [item.to_dict() for item in self.too_few_pairs]}
        if self.by is not None:
            found["by"] = self.by
            found["failed_slices"] = [item.value for item in self.failed_slices]
            found["slices"] = [{"value": item.value, **item.gate.to_dict()} for item in self.slices]
        return found


def find_regressions(trend: Trend, points: float, min_pairs: int = DEFAULT_MIN_PAIRS,
                     strict: bool = False) -> GateResult:
    """Judge `trend`'s latest period (see the module docstring)."""
    if points < 0:
        raise TrendError(f"--fail-on-regression must be 0 points or more, not {points:g}")
    if min_pairs < 1:
        raise TrendError(f"--min-pairs must be at least 1, not {min_pairs}")
    latest = trend.latest
    found: list[Regression] = []
    small: list[NotJudged] = []
    for kind, frame, name, size in (("check", trend.checks, "check", "pairs_checked"),
                                    ("operator", trend.operators, "operator", "pairs")):
        worse = frame.filter(
            (pl.col(trend.period) == latest) & pl.col("change").is_not_null()
            & (pl.col("change") * 100 > points)
        )
        for row in worse.iter_rows(named=True):
            if row[size] < min_pairs:
                small.append(NotJudged(kind, row[name], row[size]))
            elif row["beyond_noise"]:
                found.append(Regression(kind, row[name], as_text(latest), row["rate"],
                                        row["baseline"], row["low"], row["high"], row[size]))
    baselined = any(
        frame.filter((pl.col(trend.period) == latest) & pl.col("baseline").is_not_null()).height
        for frame in (trend.checks, trend.operators))
    return GateResult(points, min_pairs, None if latest is None else as_text(latest),
                      tuple(found), tuple(small), baselined, trend.first_of_contract, strict)


def find_sliced_regressions(config: TrendConfig, trend: Trend, by: str, points: float,
                            min_pairs: int = DEFAULT_MIN_PAIRS, strict: bool = False) -> GateResult:
    """The gate on `trend` (`config`'s) and on each slice of it by column `by`: each value
    with pairs in the latest period, as a trend of its own (see the module docstring)."""
    whole = find_regressions(trend, points, min_pairs, strict)
    slices = tuple(
        SliceGate(value, find_regressions(
            compute_trend(replace(config, where=(by, value))), points, min_pairs, strict))
        for value in slice_values(config, trend, by))
    return replace(whole, by=by, slices=slices)


def slice_values(config: TrendConfig, trend: Trend, by: str) -> list[str | None]:
    """The values of column `by` among the latest period's pairs, sorted (null last)."""
    pairs = read_table(config.out, "pairs")
    usable = [name for name, kind in pairs.collect_schema().items()
              if kind == pl.String and name not in _NOT_SLICES]
    if by not in usable:
        raise TrendError(f"--by {by!r}: no such column of pairs to slice by"
                         f" (choose {', '.join(sorted(usable))})")
    if trend.latest is None:
        return []
    latest = trend.selection.of_runs(list(trend.chosen.runs) if trend.chosen else []).apply(pairs)
    latest = latest.filter(pl.col(trend.period) == trend.latest)
    if trend.per == "night":
        latest = latest.filter(pl.col("logged_at").is_not_null())
    values = latest.select(pl.col(by).unique()).collect()[by].to_list()
    return sorted(values, key=lambda value: (value is None, value or ""))


_NOT_SLICES = frozenset({"pair_id", "run_id", "source", "status", "input_error", "engine_error",
                         "record_sha256"})
"""String columns of `pairs` that are no slice: one value a pair, or the outcome itself."""
