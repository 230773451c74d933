"""The Wilson score interval: how far a rate seen on n trials can be trusted.

Chosen over the normal approximation because it stays inside [0, 1] and is honest at the
extremes that matter here: 0 failures out of 3 pairs gives [0, 56%], not "0% ± 0". The interval
always holds the observed rate; the ends are clamped to it so that rounding (1.0 vs
0.9999999999999999 at a rate of 1) never puts the rate outside its own interval.
"""

from __future__ import annotations

import math

import polars as pl

Z95 = 1.959963984540054
"""The two-sided 95% normal quantile."""


def wilson(rate: float, n: float, z: float = Z95) -> tuple[float, float]:
    """(low, high) of the interval around `rate` observed on `n` trials (n > 0)."""
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (rate + z2 / (2 * n)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / n + z2 / (4 * n * n)) / denominator
    return max(0.0, min(rate, centre - half)), min(1.0, max(rate, centre + half))


def wilson_exprs(rate: pl.Expr, n: pl.Expr, low: str, high: str, z: float = Z95) -> list[pl.Expr]:
    """Polars expressions for the interval's two ends (null where `n` is 0 or `rate` null)."""
    z2 = z * z
    n = n.cast(pl.Float64)
    denominator = 1 + z2 / n
    centre = (rate + z2 / (2 * n)) / denominator
    half = z * (rate * (1 - rate) / n + z2 / (4 * n * n)).sqrt() / denominator
    valid = (n > 0) & rate.is_not_null()
    return [
        pl.when(valid).then(pl.max_horizontal(pl.min_horizontal(centre - half, rate), pl.lit(0.0)))
        .alias(low),
        pl.when(valid).then(pl.min_horizontal(pl.max_horizontal(centre + half, rate), pl.lit(1.0)))
        .alias(high),
    ]
