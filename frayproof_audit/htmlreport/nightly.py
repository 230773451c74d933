"""Per-night rates for the report's trend charts, each night against a trailing baseline.

A night's rate alone says little; what a reader wants to know is whether it moved. Each night
is compared with the median of the nights before it (up to `baseline` of them), and the band
drawn around that median is where a night *of that night's size* would land 95% of the time
if nothing had changed (the Wilson interval of the baseline rate at that night's count), so a
3-pair night gets a wide band and cannot look like a regression.
"""

from __future__ import annotations

import math
from statistics import median

import polars as pl

Z95 = 1.959963984540054


def wilson(successes: int, total: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of `successes / total` (None for an empty sample)."""
    if total <= 0:
        return None
    return interval(successes / total, total, z)


def interval(p: float, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson interval around rate `p` for a sample of `total` (> 0)."""
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))  # exact at 0 and 1


def survival_by_night(mutants: pl.LazyFrame) -> pl.LazyFrame:
    """log_date, operator, applicable, survived: mutants judged per operator and night."""
    return (
        mutants.filter(pl.col("status").is_in(["caught", "survived"]))
        .group_by("log_date", "operator")
        .agg(pl.len().cast(pl.Int64).alias("applicable"),
             (pl.col("status") == "survived").sum().cast(pl.Int64).alias("survived"))
    )


def failure_by_night(pairs: pl.LazyFrame, findings: pl.LazyFrame) -> pl.LazyFrame:
    """log_date, check, failing, total: pairs with an error finding of the check, of the pairs
    checked (pass or fail) that night."""
    checked = (
        pairs.filter(pl.col("status").is_in(["pass", "fail"]))
        .group_by("log_date").agg(pl.len().cast(pl.Int64).alias("total"))
    )
    failing = (
        findings.filter(pl.col("severity") == "error")
        .group_by("log_date", "check")
        .agg(pl.struct("run_id", "pair_id").n_unique().cast(pl.Int64).alias("failing"))
    )
    return failing.join(checked, on="log_date", how="left")


def with_baseline(counts: list[tuple[int, int]], nights: int) -> list[tuple[float | None, float | None,
                                                                             float | None]]:
    """For each night's (hits, total): (baseline rate, band low, band high), None for the first
    night or when no earlier night had data. The baseline is the median rate of up to `nights`
    earlier nights that had data."""
    out: list[tuple[float | None, float | None, float | None]] = []
    rates: list[float] = []
    for hits, total in counts:
        window = rates[-nights:]
        if not window:
            out.append((None, None, None))
        else:
            centre = median(window)
            low, high = interval(centre, total) if total else (None, None)
            out.append((centre, low, high))
        if total:
            rates.append(hits / total)
    return out
