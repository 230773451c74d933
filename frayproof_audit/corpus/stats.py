"""Per-check, per-condition-code and per-operator statistics over the committed runs of a dataset.

Computed with Polars lazy scans, so only the columns involved are read. A pair is counted as
`(run_id, pair_id)`: the same log audited on two nights is two pairs, never one. Findings of
runs written before condition codes existed (tables schema 1) have a null `code`, so they form
one row per check with `code` null in the codes table.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import date
from typing import Any

import polars as pl

from frayproof_audit.corpus.config import STATS_BY
from frayproof_audit.corpus.dataset_reader import committed_files, read_table
from frayproof_audit.corpus.status import PairStatus
from frayproof_audit.errors import InputError

BY = STATS_BY
CHECK_COLUMNS = (
    "check", "findings", "errors", "warnings", "pairs_affected", "failing_pairs",
    "pairs_checked", "failure_rate",
)
_FINDING_COLUMNS = CHECK_COLUMNS[1:]
CODE_COLUMNS = ("check", "code", *_FINDING_COLUMNS)
OPERATOR_COLUMNS = ("operator", "applicable", "caught", "survived", "skipped", "survival_rate")
_RATES = ("failure_rate", "survival_rate")


class StatsError(InputError):
    """Unusable stats options (exit 2)."""


@dataclass(frozen=True, slots=True)
class Stats:
    """The three stats tables, grouped by `by` (None: the whole dataset)."""

    by: str | None
    runs: int
    checks: pl.DataFrame
    codes: pl.DataFrame
    """Like `checks`, one row per check and condition code (null for schema-1 findings)."""
    operators: pl.DataFrame

    def tidy(self) -> pl.DataFrame:
        """All tables in one long frame, for CSV and Parquet: a `table` column says which, `name`
        is the check or operator, and `code` (last, so older column positions hold) the code."""
        frames = [
            self.checks.rename({"check": "name"}).with_columns(pl.lit("checks").alias("table")),
            self.codes.rename({"check": "name"}).with_columns(pl.lit("codes").alias("table")),
            self.operators.rename({"operator": "name"}).with_columns(pl.lit("operators").alias("table")),
        ]
        keys = [self.by] if self.by else []
        combined = pl.concat(frames, how="diagonal_relaxed")
        rest = [c for c in combined.columns if c not in ("table", *keys, "name", "code")]
        return combined.select("table", *keys, "name", *rest, "code")

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "runs": self.runs,
            "checks": [_plain(row) for row in self.checks.to_dicts()],
            "codes": [_plain(row) for row in self.codes.to_dicts()],
            "operators": [_plain(row) for row in self.operators.to_dicts()],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_text(self) -> str:
        head = f"{self.runs} committed run(s)" + (f", by {self.by}" if self.by else "")
        return "\n".join([
            head,
            "",
            "Checks",
            _table(self.checks),
            "",
            "Condition codes",
            _table(self.codes),
            "",
            "Mutation operators",
            _table(self.operators),
        ])


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() if isinstance(v, date) else v) for k, v in row.items()}


def _cell(value: Any, column: str) -> str:
    if value is None:
        return "-"
    if column in _RATES:
        return f"{value:.1%}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _table(frame: pl.DataFrame) -> str:
    if frame.height == 0:
        return "  (none)"
    rows = [[_cell(v, c) for c, v in zip(frame.columns, row, strict=True)] for row in frame.iter_rows()]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(frame.columns)]
    numeric = [frame[c].dtype.is_numeric() for c in frame.columns]

    def line(cells: list[str]) -> str:
        return "  " + "  ".join(
            cell.rjust(w) if num else cell.ljust(w)
            for cell, w, num in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    return "\n".join([line(list(frame.columns)), line(["-" * w for w in widths]), *map(line, rows)])


def compute_stats(out: str | os.PathLike[str], by: str | None = None) -> Stats:
    """Per-check, per-code and per-operator tables over every committed run in `out`."""
    if by is not None and by not in BY:
        raise StatsError(f"unknown --by {by!r} (choose {', '.join(BY)})")
    runs = len(committed_files(out, "runs"))
    keys = [by] if by else []
    checked = (
        read_table(out, "pairs")
        .filter(pl.col("status").is_in([PairStatus.PASS.value, PairStatus.FAIL.value]))
        .group_by(keys or pl.lit(0).alias("_all"))
        .agg(pl.len().cast(pl.Int64).alias("pairs_checked"))
    )
    findings = read_table(out, "findings")
    checks = _finding_stats(findings, checked, keys, ["check"]).select(*keys, *CHECK_COLUMNS)
    codes = _finding_stats(findings, checked, keys, ["check", "code"]).select(*keys, *CODE_COLUMNS)
    operators = (
        read_table(out, "mutants")
        .group_by([*keys, "operator"])
        .agg(
            (pl.col("status") == name).sum().cast(pl.Int64).alias(name)
            for name in ("caught", "survived", "skipped")
        )
        .with_columns((pl.col("caught") + pl.col("survived")).alias("applicable"))
        .with_columns(
            pl.when(pl.col("applicable") > 0)
            .then(pl.col("survived") / pl.col("applicable"))
            .alias("survival_rate")
        )
        .select(*keys, *OPERATOR_COLUMNS)
        .sort([*keys, "operator"], nulls_last=True)
    )
    frames = pl.collect_all([checks, codes, operators])
    return Stats(by, runs, frames[0], frames[1], frames[2])


def _finding_stats(
    findings: pl.LazyFrame, checked: pl.LazyFrame, keys: list[str], names: list[str]
) -> pl.LazyFrame:
    """Findings, errors, warnings and affected/failing pairs per `keys` + `names`, with the
    pairs checked in each `keys` group and the failure rate they give."""
    pair_key = pl.struct("run_id", "pair_id")
    grouped = findings.group_by([*keys, *names]).agg(
        pl.len().cast(pl.Int64).alias("findings"),
        (pl.col("severity") == "error").sum().cast(pl.Int64).alias("errors"),
        (pl.col("severity") == "warning").sum().cast(pl.Int64).alias("warnings"),
        pair_key.n_unique().cast(pl.Int64).alias("pairs_affected"),
        pair_key.filter(pl.col("severity") == "error").n_unique().cast(pl.Int64).alias("failing_pairs"),
    )
    if keys:
        grouped = grouped.join(checked, on=keys, how="left", nulls_equal=True)
    else:
        grouped = grouped.join(checked.drop("_all"), how="cross")
    return grouped.with_columns(
        pl.when(pl.col("pairs_checked") > 0)
        .then(pl.col("failing_pairs") / pl.col("pairs_checked"))
        .alias("failure_rate")
    ).sort([*keys, *names], nulls_last=True)
