"""`Trend` for people (text), for programs (JSON) and as one long table (CSV, Parquet).

The text shows each series as a row of rates, one column per period, then the latest period's
baseline and change; the JSON and the long table hold every column of every frame. A
`TrendReport` (the trend and its gate's verdict) is what the table outputs show
(`render.tables`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

import polars as pl

from frayproof_audit.corpus.dataset.selection import short
from frayproof_audit.corpus.dataset.text_table import cell, text_table
from frayproof_audit.corpus.store.failure_rule import Blame
from frayproof_audit.trends.series import Trend, as_text

if TYPE_CHECKING:
    from frayproof_audit.trends.gate import GateResult


@dataclass(frozen=True, slots=True)
class TrendReport:
    """A trend and, with `--fail-on-regression`, its gate's verdict: a table result."""

    trend: Trend
    gate: GateResult | None = None

    def to_text(self) -> str:
        return to_text(self.trend, self.gate)

    def to_json(self) -> str:
        return to_json(self.trend, self.gate)

    def tidy(self) -> pl.DataFrame:
        return tidy(self.trend)


def tidy(trend: Trend) -> pl.DataFrame:
    """Every series in one long frame: `series` (checks, codes or operators), the period, `name`
    (check or operator), `code`, the counts, then the metrics. Totals and streaks are in the
    text and JSON forms."""
    frames = [
        trend.checks.rename({"check": "name"}).with_columns(pl.lit("checks").alias("series")),
        trend.codes.rename({"check": "name"}).with_columns(pl.lit("codes").alias("series")),
        trend.operators.rename({"operator": "name"}).with_columns(pl.lit("operators").alias("series")),
    ]
    combined = pl.concat(frames, how="diagonal_relaxed")
    first = ["series", trend.period, "name", "code"]
    return combined.select(*first, *(c for c in combined.columns if c not in first))


def to_dict(trend: Trend, gate: GateResult | None = None) -> dict[str, Any]:
    def rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
        return [{k: (v.isoformat() if isinstance(v, date) else v) for k, v in row.items()}
                for row in frame.to_dicts()]

    return {
        "per": trend.per,
        "period": trend.period,
        "baseline": trend.baseline,
        "blame": str(trend.blame),
        "filters": trend.selection.describe() or None,
        "contract": trend.contract,
        "contracts": list(trend.chosen.contracts) if trend.chosen else [],
        "contract_changes": [{"period": as_text(period), "contracts": list(keys)}
                             for period, keys in trend.changes],
        "left_out": trend.chosen.to_dict() if trend.chosen else [],
        "runs": list(trend.runs),
        "periods": [as_text(p) for p in trend.periods],
        "undated": trend.undated,
        "totals": rows(trend.totals),
        "checks": rows(trend.checks),
        "codes": rows(trend.codes),
        "operators": rows(trend.operators),
        "streaks": rows(trend.streaks),
        "gate": gate.to_dict() if gate else None,
    }


def to_json(trend: Trend, gate: GateResult | None = None) -> str:
    return json.dumps(to_dict(trend, gate), indent=2, ensure_ascii=False)


def to_text(trend: Trend, gate: GateResult | None = None) -> str:
    unit = "night" if trend.per == "night" else "run"
    span = f"{as_text(trend.periods[0])} … {as_text(trend.periods[-1])}"
    contracts = trend.chosen.contracts if trend.chosen else ()
    judged = (f"contract {short(trend.contract)}" if trend.contract is not None else
              f"{len(contracts)} contracts (--contract all)")
    head = [
        f"Trend over {len(trend.periods)} {unit}(s), {span}: {len(trend.runs)} run(s), {judged}"
        + (f" ({trend.selection.describe()})" if trend.selection.describe() else ""),
        *(trend.chosen.notes() if trend.chosen else ()),
        f"Baseline: median of the previous {trend.baseline} {unit}s; change in points against it.",
        *blame_line(trend.blame, int(trend.totals["inherited_failures"].sum() or 0)),
    ]
    for period, keys in trend.changes:
        head.append(f"Contract changed on {as_text(period)} ({_label(trend, period)} below): now"
                    f" {' and '.join(map(short, keys))}; baselines start again there.")
    if trend.undated:
        head.append(f"{trend.undated} pair(s) without a logged_at are not placed in any night.")
    codes = trend.codes.filter(pl.col("failing_pairs").sum().over("check", "code") > 0)
    blocks = [
        "\n".join(head),
        f"Pairs per {unit}\n" + text_table(trend.totals.select(
            trend.period, "pairs", "passed", "failed", "inherited_failures", "input_errors",
            "engine_errors", "mutation_score"), percent=("mutation_score",)),
        "Failure rate per check\n" + _grid(trend, trend.checks, ["check"]),
        "Failure rate per condition code (codes that failed at least once)\n"
        + _grid(trend, codes, ["check", "code"]),
        "Survival rate per operator (mutants the contract did not catch)\n"
        + _grid(trend, trend.operators, ["operator"]),
        f"Since when: compactor × check that failed (streak: {unit}s in a row up to the"
        f" compactor's latest)\n" + text_table(
            trend.streaks.select(
                "compactor", "check", "since", "streak", "first_failed", "last_failed",
                pl.format("{}/{}", "periods_failed", "periods_audited").alias("failed"),
                "failing_pairs")),
    ]
    if gate is not None:
        blocks.append(gate.to_text())
    return "\n\n".join(blocks)


def blame_line(blame: Blame, inherited: int) -> list[str]:
    """What `--blame` changed, in one line (none when it changed nothing)."""
    if blame is Blame.ALL:
        return ["Blame all: every failing pair and error counts, inherited from before or not."]
    if not inherited:
        return []
    return [f"Blame introduced: only errors the compactor introduced count; {inherited:,} failing"
            " pair(s) whose every error their before already held are inherited_failures"
            " (--blame all counts them)."]


def _grid(trend: Trend, frame: pl.DataFrame, keys: list[str]) -> str:
    """One row per series: its rate in each period, then the latest baseline and change."""
    labels = [_label(trend, p) for p in trend.periods]
    rows = []
    for part in frame.partition_by(keys, maintain_order=True):
        by_period = {row[trend.period]: row for row in part.iter_rows(named=True)}
        last = by_period.get(trend.latest, {})
        change = last.get("change")
        rows.append({
            **{key: part[key][0] for key in keys},
            **{label: cell(by_period.get(p, {}).get("rate"), True)
               for label, p in zip(labels, trend.periods, strict=True)},
            "baseline": cell(last.get("baseline"), True),
            "change": "-" if change is None else f"{100 * change:+.1f}",
            "noise": "beyond" if last.get("beyond_noise") and (change or 0) > 0 else "",
        })
    if not rows:
        return "  (none)"
    table = pl.DataFrame(rows, schema={**{k: pl.String for k in rows[0]}})
    return _right_aligned(table, keys)


def _right_aligned(table: pl.DataFrame, keys: list[str]) -> str:
    widths = [max(len(c), *(len(str(v)) for v in table[c])) for c in table.columns]

    def line(cells: list[str]) -> str:
        return "  " + "  ".join(
            text.ljust(w) if column in keys or column == "noise" else text.rjust(w)
            for text, w, column in zip(cells, widths, table.columns, strict=True)
        ).rstrip()

    return "\n".join([line(table.columns), line(["-" * w for w in widths]),
                      *(line([str(v) for v in row]) for row in table.iter_rows())])


def _label(trend: Trend, period: Any) -> str:
    """A period's column heading; `*` marks a period where the contract changed."""
    label = as_text(period)[5:] if trend.per == "night" else as_text(period)
    return label + "*" if any(period == changed for changed, _ in trend.changes) else label
