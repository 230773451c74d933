"""Trend charts (PNG or SVG): one panel per check and per operator, the baseline band drawn.

Each panel shows the series' rate per period with its 95% Wilson interval as error bars, the
trailing baseline (dashed) and its band (the lowest to the highest rate of the baseline
periods, shaded). Periods the gate judged a regression are drawn in red. Series that stayed at
0% in every period are left out (the title says how many), so the panels that matter are big
enough to read.

Needs matplotlib (the `plot` extra); without it `write_chart` raises `PlotExtraMissing`.
Figures are built without pyplot (no global state, no display), and SVGs are deterministic.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from frayproof_audit.trends.series import Trend, TrendError, as_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from frayproof_audit.trends.gate import GateResult

CHART_FORMATS = ("png", "svg")
COLUMNS = 3
RED = "#c0392b"
BLUE = "#1f5fa8"
GREY = "#8a8a8a"


class PlotExtraMissing(TrendError):
    """matplotlib is not installed (exit 2)."""


def write_chart(trend: Trend, path: str | os.PathLike[str], *, gate: GateResult | None = None,
                chart_format: str | None = None) -> Path:
    """Draw `trend` into `path`; the format is `chart_format` or the file's suffix (png, svg)."""
    target = Path(path)
    image = (chart_format or target.suffix.lstrip(".")).lower()
    if image not in CHART_FORMATS:
        raise TrendError(f"cannot tell the chart format of '{path}' (use .png or .svg)")
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotExtraMissing(
            "charts need matplotlib: pip install 'frayproof-audit[plot]'") from None
    panels = _panels(trend)
    rows = max(1, math.ceil(len(panels) / COLUMNS))
    with matplotlib.rc_context({"svg.hashsalt": "frayproof-audit", "font.size": 8}):
        figure = Figure(figsize=(4.2 * COLUMNS, 2.6 * rows + 0.6), layout="constrained")
        axes = figure.subplots(rows, COLUMNS, squeeze=False).ravel()
        flagged = {(r.kind, r.name) for r in gate.regressions} if gate else set()
        for ax, (kind, name, series) in zip(axes, panels, strict=False):
            _panel(ax, trend, kind, name, series, (kind, name) in flagged)
        for ax in axes[len(panels):]:
            ax.set_visible(False)
        flat = len(trend.checks["check"].unique()) + len(trend.operators["operator"].unique()) - len(panels)
        span = f"{as_text(trend.periods[0])} … {as_text(trend.periods[-1])}" if trend.periods else "no data"
        figure.suptitle(
            f"Failure rate per check, survival rate per operator ({span}); dashed: median of the"
            f" previous {trend.baseline} {'nights' if trend.per == 'night' else 'runs'}, band: their range"
            + (f"; {flat} series at 0% throughout not shown" if flat else ""), fontsize=9)
        target.parent.mkdir(parents=True, exist_ok=True)
        metadata: dict[str, Any] = {"Date": None} if image == "svg" else {"Software": None}
        figure.savefig(target, format=image, dpi=110, metadata=metadata)
    return target


def _panels(trend: Trend) -> list[tuple[str, str, pl.DataFrame]]:
    """(kind, name, its rows) for every check and operator with a non-zero rate somewhere."""
    found = []
    for kind, frame, column in (("check", trend.checks, "check"),
                                ("operator", trend.operators, "operator")):
        for name in frame[column].unique(maintain_order=True).to_list():
            series = frame.filter(pl.col(column) == name)
            if (series["rate"].fill_null(0) > 0).any():
                found.append((kind, name, series))
    return found


def _panel(ax: Axes, trend: Trend, kind: str, name: str, series: pl.DataFrame, flagged: bool) -> None:
    x = list(range(len(trend.periods)))
    position = {period: i for i, period in enumerate(trend.periods)}
    rows = series.to_dicts()
    xs = [position[row[trend.period]] for row in rows]

    def pct(value: float | None) -> float:
        return math.nan if value is None else 100 * value

    rate = [pct(row["rate"]) for row in rows]
    low = [pct(row["low"]) for row in rows]
    high = [pct(row["high"]) for row in rows]
    base = [pct(row["baseline"]) for row in rows]
    ax.fill_between(xs, [pct(r["baseline_min"]) for r in rows], [pct(r["baseline_max"]) for r in rows],
                    color=GREY, alpha=0.25, linewidth=0, step="mid", label="baseline band")
    ax.plot(xs, base, color=GREY, linestyle="--", linewidth=1, drawstyle="steps-mid", label="baseline")
    errors = [[max(0.0, r - lo) for r, lo in zip(rate, low, strict=True)],
              [max(0.0, hi - r) for r, hi in zip(rate, high, strict=True)]]
    ax.errorbar(xs, rate, yerr=errors, color=BLUE, marker="o", markersize=3, linewidth=1.2,
                elinewidth=0.8, capsize=2, label="rate (95% interval)")
    if flagged and rows:
        ax.plot([xs[-1]], [rate[-1]], marker="o", markersize=7, color=RED, linestyle="none",
                label="regression")
    what = "failure rate" if kind == "check" else "survival"
    ax.set_title(f"{name} ({what})", color=RED if flagged else "black", fontsize=9)
    ax.set_ylim(0, max(5.0, min(100.0, 1.15 * max((v for v in high if not math.isnan(v)), default=5.0))))
    ax.yaxis.set_major_formatter("{x:.0f}%")
    ax.set_xticks(x, [_tick(trend, period) for period in trend.periods], rotation=45, ha="right")
    ax.grid(axis="y", linewidth=0.4, alpha=0.5)


def _tick(trend: Trend, period: Any) -> str:
    text = as_text(period)
    return text[5:] if trend.per == "night" else text
