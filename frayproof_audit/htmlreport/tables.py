"""The report's tables over the whole selection: nights, checks, condition codes, compactors and
operators, as Polars lazy frames (collected together by `data.gather`)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from frayproof_audit.checks import CHECK_NAMES
from frayproof_audit.corpus.dataset.wilson import wilson
from frayproof_audit.corpus.store.failure_rule import Blame, counted_findings, failure_expr, inherited_expr
from frayproof_audit.mutate.operators import OPERATORS


def order(names: Sequence[str], known: Sequence[str]) -> list[str]:
    """`names` in registry order (`known`), any others after them by name."""
    position = {name: i for i, name in enumerate(known)}
    return sorted(set(names), key=lambda name: (position.get(name, len(known)), name))


def _rate(hits: str, total: str, name: str) -> pl.Expr:
    return pl.when(pl.col(total) > 0).then(pl.col(hits) / pl.col(total)).alias(name)


def _count(condition: pl.Expr, name: str) -> pl.Expr:
    return condition.sum().cast(pl.Int64).alias(name)


def nights_table(pairs: pl.LazyFrame, blame: Blame) -> pl.LazyFrame:
    """Per `log_date`: pairs by status (failures under `blame`, `corpus.store.failure_rule`) and the failure
    rate of the pairs checked."""
    status = pl.col("status")
    return (
        pairs.group_by("log_date")
        .agg(pl.len().cast(pl.Int64).alias("pairs"), _count(status == "pass", "passed"),
             _count(failure_expr(blame), "failed"), _count(inherited_expr(blame), "inherited"),
             _count(status == "input_error", "input_errors"),
             _count(status == "engine_error", "engine_errors"))
        .with_columns((pl.col("passed") + pl.col("failed") + pl.col("inherited")).alias("checked"))
        .with_columns(_rate("failed", "checked", "failure_rate"))
        .sort("log_date")
    )


def _checked(pairs: pl.LazyFrame) -> pl.LazyFrame:
    return (pairs.filter(pl.col("status").is_in(["pass", "fail"]))
            .select(pl.len().cast(pl.Int64).alias("checked")))


def _finding_counts(findings: pl.LazyFrame, keys: list[str], blame: Blame) -> pl.LazyFrame:
    pair = pl.struct("run_id", "pair_id")
    failing = (pl.col("severity") == "error") & counted_findings(blame)
    return findings.group_by(keys).agg(
        pl.len().cast(pl.Int64).alias("findings"),
        _count(pl.col("severity") == "error", "errors"),
        _count(pl.col("severity") == "warning", "warnings"),
        pair.filter(failing).n_unique().cast(pl.Int64).alias("failing_pairs"),
    )


def check_table(pairs: pl.LazyFrame, findings: pl.LazyFrame, blame: Blame) -> pl.LazyFrame:
    """Per check: findings, errors, warnings, failing pairs (by errors `blame` counts), pairs
    checked, failure rate."""
    return (_finding_counts(findings, ["check"], blame).join(_checked(pairs), how="cross")
            .with_columns(_rate("failing_pairs", "checked", "failure_rate")))


def code_table(pairs: pl.LazyFrame, findings: pl.LazyFrame, blame: Blame) -> pl.LazyFrame:
    """As `check_table`, per check and condition code, the most failing first."""
    return (_finding_counts(findings, ["check", "code"], blame).join(_checked(pairs), how="cross")
            .with_columns(_rate("failing_pairs", "checked", "failure_rate"))
            .sort(["failing_pairs", "findings", "check", "code"], descending=[True, True, False, False],
                  nulls_last=True))


def with_zero_checks(checks: pl.DataFrame, active: list[str], checked: int) -> pl.DataFrame:
    """Every active check gets a row, 0 where it found nothing: a check that never fails is a
    result worth seeing, not a missing line."""
    absent = [name for name in active if name not in set(checks["check"].to_list())]
    if absent:
        zeros = pl.DataFrame({"check": absent}).with_columns(
            *(pl.lit(0, pl.Int64).alias(c) for c in ("findings", "errors", "warnings", "failing_pairs")),
            pl.lit(checked, pl.Int64).alias("checked"),
            pl.lit(0.0 if checked else None, pl.Float64).alias("failure_rate"),
        )
        checks = pl.concat([checks, zeros.select(checks.columns)], how="vertical_relaxed")
    names = order(checks["check"].to_list(), CHECK_NAMES)
    position = pl.col("check").replace_strict(names, list(range(len(names))), return_dtype=pl.Int64)
    return checks.with_columns(position.alias("_o")).sort("_o").drop("_o")


def compactor_table(pairs: pl.LazyFrame, mutants: pl.LazyFrame, blame: Blame) -> pl.LazyFrame:
    """Per compactor: pairs by status (failures under `blame`), failure rate, mutants judged and
    survival rate."""
    status = pl.col("status")
    by_pairs = (
        pairs.group_by("compactor")
        .agg(pl.len().cast(pl.Int64).alias("pairs"), _count(status == "pass", "passed"),
             _count(failure_expr(blame), "failed"), _count(inherited_expr(blame), "inherited"),
             _count(status == "input_error", "input_errors"))
        .with_columns((pl.col("passed") + pl.col("failed") + pl.col("inherited")).alias("checked"))
        .with_columns(_rate("failed", "checked", "failure_rate"))
    )
    by_mutants = (
        mutants.filter(status.is_in(["caught", "survived"])).group_by("compactor")
        .agg(pl.len().cast(pl.Int64).alias("mutants"), _count(status == "survived", "survived"))
    )
    return (
        by_pairs.join(by_mutants, on="compactor", how="left", nulls_equal=True)
        .with_columns(pl.col("mutants", "survived").fill_null(0))
        .with_columns(_rate("survived", "mutants", "survival_rate"))
        .sort(["failure_rate", "compactor"], descending=[True, False], nulls_last=True)
    )


def operator_table(mutants: pl.LazyFrame) -> pl.LazyFrame:
    """Per operator: pairs it applied to, mutants judged, caught, survived, skipped, survival rate."""
    status = pl.col("status")
    return (
        mutants.group_by("operator")
        .agg(pl.struct("run_id", "pair_id").filter(status != "skipped").n_unique().cast(pl.Int64)
             .alias("pairs"),
             _count(status == "caught", "caught"), _count(status == "survived", "survived"),
             _count(status == "skipped", "skipped"))
        .with_columns((pl.col("caught") + pl.col("survived")).alias("applicable"))
        .with_columns(_rate("survived", "applicable", "survival_rate"))
        .select("operator", "pairs", "applicable", "caught", "survived", "skipped", "survival_rate")
        .sort("operator")
    )


def with_intervals(operators: pl.DataFrame) -> pl.DataFrame:
    """The operators table in registry order, each row with the 95% (Wilson) interval of its
    survival rate, so 1 survivor of 3 does not read like a third of all faults getting through.

    The interval is over the pairs the operator applied to, not its mutants (as in `trend`):
    the mutants of one pair share its compaction and are far from independent trials.
    """
    rows = {row["operator"]: row for row in operators.to_dicts()}
    ordered = [rows[name] for name in order(list(rows), OPERATORS)]
    bounds: list[tuple[float | None, float | None]] = [
        wilson(row["survival_rate"], row["pairs"]) if row["pairs"] and row["survival_rate"] is not None
        else (None, None) for row in ordered]
    return pl.DataFrame(ordered, schema=operators.schema).with_columns(
        pl.Series("low", [b[0] for b in bounds], dtype=pl.Float64),
        pl.Series("high", [b[1] for b in bounds], dtype=pl.Float64),
    )
