"""Trends over the nights of a dataset: per-period series with baselines, the regression gate,
charts and the mutation-score badge.

`compute_trend(TrendConfig(out, ...))` returns a `Trend` of Polars frames (`trends.series`);
`find_regressions` judges its latest period (`trends.gate`); `write_chart` draws it
(`trends.charts`, needs the `plot` extra); `badge` gives the shields.io endpoint JSON
(`trends.badge`). `frayproof-audit trend` is a thin wrapper over these. Modules are imported on
first use, so the CLI pays for Polars only when the command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from frayproof_audit.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from frayproof_audit.trends.series import Trend, TrendConfig, TrendError, compute_trend

_LAZY = {
    "Trend": "frayproof_audit.trends.series",
    "TrendConfig": "frayproof_audit.trends.series",
    "TrendError": "frayproof_audit.trends.series",
    "compute_trend": "frayproof_audit.trends.series",
}


__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = ["Trend", "TrendConfig", "TrendError", "compute_trend"]
