"""The per-night (or per-run) series: what `trend`, its gate, its charts and the HTML report read.

`compute_trend(config)` returns a `Trend`: Polars frames with one row per period and operator,
check or condition code, every name in every period (zero rows included), each with its rate,
the rate's 95% Wilson interval, the trailing baseline and the change against it.

Both kinds of rate are "higher is worse": an operator's `rate` is its survival rate (mutants
the contract accepted / mutants that applied), a check's or code's `rate` its failure rate
(pairs with an error finding of it / pairs checked). That lets one gate and one chart serve both.

Noise. A check's interval is over the pairs checked in the period. An operator's interval is
over the *pairs* it applied to, not its mutants: the mutants of one pair share that pair's
compaction and are far from independent trials, so counting them would make a three-pair
night look decisive. A change is `beyond_noise` when the baseline lies below the period's
interval.

Baseline. For each series, the median of its rates in the `baseline` most recent earlier
periods that have a rate (periods where it had nothing to judge are skipped), with their
minimum and maximum as the band charts draw. The first period has none.

Blame. Which failing pairs and findings count is `corpus.store.failure_rule`'s (`TrendConfig.blame`): by
default only errors the compactor introduced make a pair, a check or a code fail, so a
compactor that keeps a before's defect verbatim is never on a streak for it.

Contracts. Which runs count is `selection.choose_runs`'s: by default those of the newest
contract. With `--contract all` the runs of several contracts can follow one another: the
period where the contract changes is marked (`Trend.changes`), and baselines start again
there, since a rate judged by one contract is no baseline for a rate judged by another.
"""

from __future__ import annotations

import os
import statistics
from collections import deque
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

import polars as pl

from frayproof_audit.corpus.dataset.selection import (
    Chosen,
    RunInfo,
    Selection,
    SelectionError,
    active_conditions,
    choose_runs,
    contract_of,
    nothing_chosen,
)
from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.corpus.dataset.wilson import wilson_exprs
from frayproof_audit.corpus.store.failure_rule import (
    DEFAULT_BLAME,
    Blame,
    counted_findings,
    failure_expr,
    inherited_expr,
)
from frayproof_audit.corpus.store.pair_status import PairStatus

Per = Literal["night", "run"]
PER: tuple[Per, ...] = ("night", "run")
PERIOD_COLUMN: dict[Per, str] = {"night": "log_date", "run": "run_id"}
DEFAULT_BASELINE = 7
"""Trailing periods the baseline is the median of (a week of nights)."""

METRIC_COLUMNS = ("rate", "low", "high", "baseline", "baseline_min", "baseline_max", "change",
                  "beyond_noise")
"""The columns every series frame ends with (see the module docstring)."""
OPERATOR_COLUMNS = ("operator", "pairs", "applicable", "caught", "survived", *METRIC_COLUMNS)
CHECK_COLUMNS = ("check", "pairs_checked", "failing_pairs", *METRIC_COLUMNS)
CODE_COLUMNS = ("check", "code", "pairs_checked", "failing_pairs", *METRIC_COLUMNS)
TOTAL_COLUMNS = ("pairs", "passed", "failed", "input_errors", "engine_errors", "mutants_caught",
                 "mutants_survived", "mutation_score", "contract", "inherited_failures")
"""`contract`: the contract key of the period's runs (several, comma-separated, when runs of
different contracts share a night under `--contract all`). `failed` counts the failures under
`blame` (`corpus.store.failure_rule`), `inherited_failures` the failing pairs it does not count (every error
already in before; 0 under `--blame all`)."""
_COUNT_COLUMNS = tuple(name for name in TOTAL_COLUMNS if name not in ("mutation_score", "contract"))
STREAK_COLUMNS = ("compactor", "check", "first_failed", "since", "streak", "last_failed",
                  "periods_failed", "periods_audited", "failing_pairs")


_TOLERANCE = 1e-9
"""Rounding slack when comparing a baseline with an interval end (0 vs 3e-18 is no change)."""


class TrendError(SelectionError):
    """Unusable trend options, or nothing to show (exit 2)."""


@dataclass(frozen=True, slots=True)
class TrendConfig:
    """What `compute_trend` is asked: the dataset, the rows, the period and the baseline length."""

    out: str | os.PathLike[str]
    selection: Selection = field(default_factory=Selection)
    per: Per = "night"
    baseline: int = DEFAULT_BASELINE
    where: tuple[str, str | None] | None = None
    """Only the pairs whose column (first) holds the value (second; None: null), with their
    findings and mutants: one slice of the trend (`gate.find_sliced_regressions`)."""
    blame: Blame = DEFAULT_BLAME
    """Which failing pairs and findings count (`corpus.store.failure_rule`)."""

    def __post_init__(self) -> None:
        if self.per not in PER:
            raise TrendError(f"unknown period {self.per!r} (choose {', '.join(PER)})")
        if self.baseline < 1:
            raise TrendError(f"--baseline must be at least 1 period, not {self.baseline}")


@dataclass(frozen=True, slots=True)
class Trend:
    """Every series of one contract's runs, period by period (frames sorted by period order).

    `period` names the period column of every frame: `log_date` (a Date) per night, `run_id`
    per run (periods then ordered by the runs' start).
    """

    per: Per
    period: str
    baseline: int
    selection: Selection
    periods: tuple[Any, ...]
    """Every period with at least one pair, in order."""
    runs: tuple[str, ...]
    """The runs behind the numbers, oldest first."""
    contract: str | None
    """The contract key (fingerprint) all those runs share (None: several, `--contract all`)."""
    undated: int
    """Pairs left out of a per-night trend because their record had no usable `logged_at`
    (their `log_date` is the day the run started, not a night of logs): mostly input errors."""
    totals: pl.DataFrame
    """Per period: pairs, passed, failed, input_errors, engine_errors, mutants_caught,
    mutants_survived, mutation_score (caught / (caught + survived))."""
    operators: pl.DataFrame
    """Per period × operator: pairs it applied to, applicable, caught, survived, then the metrics
    (`rate` = survival rate)."""
    checks: pl.DataFrame
    """Per period × check: pairs_checked, failing_pairs, then the metrics (`rate` = failure rate)."""
    codes: pl.DataFrame
    """Per period × (check, code): as `checks`, for each condition code."""
    streaks: pl.DataFrame
    """Per compactor × check that ever failed: the first period it failed, the start of its
    current streak (`since`, null when the latest period it was audited in passed), the streak's
    length in periods, its last failing period, and how many periods failed / were audited."""
    chosen: Chosen | None = None
    """The runs counted and those left out (other contracts, failed runs)."""
    changes: tuple[tuple[Any, tuple[str, ...]], ...] = ()
    """Each period (after the first) judged by other contracts than the period before it, with
    its contract keys: where baselines start again."""
    blame: Blame = DEFAULT_BLAME
    """Which failing pairs and findings were counted (`corpus.store.failure_rule`)."""

    @property
    def first_of_contract(self) -> bool:
        """Whether the latest period is the first its contract judged here: after a change, or
        with older runs of other contracts left out."""
        if self.changes and self.changes[-1][0] == self.latest:
            return True
        left = self.chosen.left_out if self.chosen else ()
        return len(self.periods) == 1 and any(item.reason == "contract" for item in left)

    @property
    def latest(self) -> Any:
        """The last period (None for an empty trend)."""
        return self.periods[-1] if self.periods else None


def compute_trend(config: TrendConfig) -> Trend:
    """The series of `config.out`'s committed runs in `config.selection`.

    Raises `MixedContracts` (naming the runs) when runs named with `--run` mix contracts and no
    `--contract` was given, `TrendError` when nothing is selected, `DatasetError` when OUT is not
    a dataset.
    """
    asked, period = config.selection, PERIOD_COLUMN[config.per]
    chosen = choose_runs(config.out, asked)
    runs = list(chosen.runs)
    if not runs:
        raise TrendError(nothing_chosen(config.out, asked, chosen))
    selection = asked.of_runs(runs)
    conditions: dict[str, tuple[str, ...]] = {}
    for key in chosen.contracts:  # several with `--contract all`: every contract's names
        for name, codes in active_conditions(contract_of([r for r in runs if r.contract == key])).items():
            conditions[name] = tuple(dict.fromkeys((*conditions.get(name, ()), *codes)))
    dated = pl.col("logged_at").is_not_null() if config.per == "night" else pl.lit(True)
    pairs = selection.apply(read_table(config.out, "pairs")).select(
        "run_id", "pair_id", "compactor", "status", "introduced_errors", "log_date",
        dated.alias("_dated"))
    errors = selection.apply(read_table(config.out, "findings")).filter(
        (pl.col("severity") == "error") & counted_findings(config.blame) & dated).select(
        "run_id", "pair_id", "compactor", "check", "code", "log_date")
    mutants = selection.apply(read_table(config.out, "mutants")).filter(dated).select(
        "run_id", "pair_id", "operator", "status", "log_date")
    if config.where is not None:
        column, value = config.where
        sliced = pl.col(column).is_null() if value is None else pl.col(column) == value
        members = selection.apply(read_table(config.out, "pairs")).filter(sliced).select(
            "run_id", "pair_id")
        pairs = pairs.join(members, on=["run_id", "pair_id"], how="semi")
        errors = errors.join(members, on=["run_id", "pair_id"], how="semi")
        mutants = mutants.join(members, on=["run_id", "pair_id"], how="semi")
    everything, errors_df, mutants_df = pl.collect_all([pairs, errors, mutants])
    pairs_df = everything.filter("_dated").drop("_dated")
    periods = _periods(pairs_df, period, runs)
    if not periods:
        raise TrendError(f"no pair in '{config.out}' has a logged_at to place it in a night"
                         " (use --per run)")
    keys = _period_contracts(pairs_df, period, runs)
    segments, changes = _segments(periods, keys)
    order = pl.DataFrame({period: list(periods), "_order": range(len(periods)), "_segment": segments,
                          "contract": [",".join(keys[p]) for p in periods]},
                         schema={period: pairs_df.schema[period], "_order": pl.Int64,
                                 "_segment": pl.Int64, "contract": pl.String})
    checked = pairs_df.filter(pl.col("status").is_in([PairStatus.PASS, PairStatus.FAIL]))
    return Trend(
        per=config.per,
        period=period,
        baseline=config.baseline,
        selection=asked,
        periods=periods,
        runs=tuple(run.run_id for run in runs),
        contract=chosen.contract,
        undated=everything.height - pairs_df.height,
        totals=_totals(pairs_df, mutants_df, period, order, config.blame),
        operators=_operators(mutants_df, period, order, config.baseline),
        checks=_failures(checked, errors_df, period, order, ["check"],
                         [(name,) for name in conditions], config.baseline),
        codes=_failures(checked, errors_df, period, order, ["check", "code"],
                        [(name, code) for name, codes in conditions.items() for code in codes],
                        config.baseline),
        streaks=_streaks(checked, errors_df, period, order),
        chosen=chosen,
        changes=changes,
        blame=config.blame,
    )


def _period_contracts(pairs: pl.DataFrame, period: str, runs: list[RunInfo]) -> dict[Any, tuple[str, ...]]:
    """Period → the contract keys of the runs with pairs in it, in the order the runs started."""
    rank = {run.run_id: i for i, run in enumerate(runs)}
    contract = {run.run_id: run.contract for run in runs}
    if period == "run_id":
        return {run_id: (key,) for run_id, key in contract.items()}
    found: dict[Any, tuple[str, ...]] = {}
    for value, ids in pairs.group_by(period).agg(pl.col("run_id").unique().alias("_runs")).iter_rows():
        ordered = sorted(ids, key=rank.__getitem__)
        found[value] = tuple(dict.fromkeys(contract[run_id] for run_id in ordered))
    return found


def _segments(periods: tuple[Any, ...], keys: dict[Any, tuple[str, ...]]
              ) -> tuple[list[int], tuple[tuple[Any, tuple[str, ...]], ...]]:
    """A segment number per period (it grows where the contracts change) and the changes."""
    segments: list[int] = []
    changes = []
    for i, value in enumerate(periods):
        if i and keys[value] != keys[periods[i - 1]]:
            changes.append((value, keys[value]))
        segments.append(len(changes))
    return segments, tuple(changes)


def _periods(pairs: pl.DataFrame, period: str, runs: list[RunInfo]) -> tuple[Any, ...]:
    present = set(pairs[period].unique().to_list())
    if period == "run_id":
        return tuple(run.run_id for run in runs if run.run_id in present)
    return tuple(sorted(present))


def _totals(pairs: pl.DataFrame, mutants: pl.DataFrame, period: str, order: pl.DataFrame,
            blame: Blame) -> pl.DataFrame:
    status = pl.col("status")
    counts = pairs.group_by(period).agg(
        pl.len().cast(pl.Int64).alias("pairs"),
        *(expr.sum().cast(pl.Int64).alias(name) for name, expr in (
            ("passed", status == PairStatus.PASS), ("failed", failure_expr(blame)),
            ("input_errors", status == PairStatus.INPUT_ERROR),
            ("engine_errors", status == PairStatus.ENGINE_ERROR),
            ("inherited_failures", inherited_expr(blame)))),
    )
    scored = mutants.group_by(period).agg(
        (status == "caught").sum().cast(pl.Int64).alias("mutants_caught"),
        (status == "survived").sum().cast(pl.Int64).alias("mutants_survived"),
    )
    judged = pl.col("mutants_caught") + pl.col("mutants_survived")
    return (
        order.join(counts, on=period, how="left")
        .join(scored, on=period, how="left")
        .with_columns(pl.col(*_COUNT_COLUMNS).fill_null(0))
        .with_columns(pl.when(judged > 0).then(pl.col("mutants_caught") / judged).alias("mutation_score"))
        .sort("_order").select(period, *TOTAL_COLUMNS)
    )


def _operators(mutants: pl.DataFrame, period: str, order: pl.DataFrame, baseline: int) -> pl.DataFrame:
    judged = mutants.filter(pl.col("status") != "skipped")
    counts = judged.group_by(period, "operator").agg(
        pl.struct("run_id", "pair_id").n_unique().cast(pl.Int64).alias("pairs"),
        pl.len().cast(pl.Int64).alias("applicable"),
        (pl.col("status") == "caught").sum().cast(pl.Int64).alias("caught"),
        (pl.col("status") == "survived").sum().cast(pl.Int64).alias("survived"),
    )
    names = mutants.select("operator").unique().sort("operator")
    grid = (
        order.join(names, how="cross")
        .join(counts, on=[period, "operator"], how="left")
        .with_columns(pl.col("pairs", "applicable", "caught", "survived").fill_null(0))
        .with_columns(pl.when(pl.col("applicable") > 0)
                      .then(pl.col("survived") / pl.col("applicable")).alias("rate"))
        .with_columns(wilson_exprs(pl.col("rate"), pl.col("pairs"), "low", "high"))
    )
    return _with_baseline(grid, ["operator"], baseline).select(period, *OPERATOR_COLUMNS)


def _failures(
    checked: pl.DataFrame, errors: pl.DataFrame, period: str, order: pl.DataFrame,
    keys: list[str], active: list[tuple[str, ...]], baseline: int,
) -> pl.DataFrame:
    """Failure-rate series per `keys` (check, or check and code): every active name, and any
    other that failed, in every period."""
    failing = errors.group_by(period, *keys).agg(
        pl.struct("run_id", "pair_id").n_unique().cast(pl.Int64).alias("failing_pairs"))
    seen = [tuple(row) for row in failing.select(keys).unique().sort(keys, nulls_last=True).iter_rows()]
    names = [*active, *(name for name in seen if name not in set(active))]
    schema = {key: pl.String for key in keys}
    names_df = pl.DataFrame(names, schema=schema, orient="row").with_row_index("_name_order")
    per_period = checked.group_by(period).agg(pl.len().cast(pl.Int64).alias("pairs_checked"))
    grid = (
        order.join(names_df, how="cross")
        .join(per_period, on=period, how="left")
        .join(failing, on=[period, *keys], how="left", nulls_equal=True)
        .with_columns(pl.col("pairs_checked", "failing_pairs").fill_null(0))
        .with_columns(pl.when(pl.col("pairs_checked") > 0)
                      .then(pl.col("failing_pairs") / pl.col("pairs_checked")).alias("rate"))
        .with_columns(wilson_exprs(pl.col("rate"), pl.col("pairs_checked"), "low", "high"))
    )
    columns = CHECK_COLUMNS if keys == ["check"] else CODE_COLUMNS
    return _with_baseline(grid, ["_name_order"], baseline).select(period, *columns)


def _with_baseline(grid: pl.DataFrame, keys: list[str], length: int) -> pl.DataFrame:
    """`grid` (one series per `keys`, with `_order`, `_segment` and `rate`) plus the baseline
    columns, sorted by series then period; a new segment (contract) starts with no baseline."""
    parts = []
    for part in grid.sort([*keys, "_order"]).partition_by(keys, maintain_order=True):
        window: deque[float] = deque(maxlen=length)
        medians, lows, highs = [], [], []
        segment = None
        for rate, now in zip(part["rate"], part["_segment"], strict=True):
            if now != segment:
                window.clear()
                segment = now
            medians.append(statistics.median(window) if window else None)
            lows.append(min(window) if window else None)
            highs.append(max(window) if window else None)
            if rate is not None:
                window.append(rate)
        parts.append(part.with_columns(
            pl.Series("baseline", medians, pl.Float64),
            pl.Series("baseline_min", lows, pl.Float64),
            pl.Series("baseline_max", highs, pl.Float64),
        ))
    if not parts:
        empty = [pl.lit(None, pl.Float64).alias(n) for n in ("baseline", "baseline_min", "baseline_max")]
        return grid.with_columns(*empty, pl.lit(None, pl.Float64).alias("change"),
                                 pl.lit(None, pl.Boolean).alias("beyond_noise"))
    return pl.concat(parts).with_columns(
        (pl.col("rate") - pl.col("baseline")).alias("change"),
        pl.when(pl.col("baseline").is_not_null() & pl.col("low").is_not_null())
        .then(pl.col("baseline") < pl.col("low") - _TOLERANCE).alias("beyond_noise"),
    )


def _streaks(checked: pl.DataFrame, errors: pl.DataFrame, period: str, order: pl.DataFrame) -> pl.DataFrame:
    """The "since when" view: for each compactor × check that ever failed, walk the periods the
    compactor was audited in (periods without it neither break nor extend a streak)."""
    audited = (checked.select(period, "compactor").unique().join(order, on=period)
               .sort("compactor", "_order", nulls_last=True))
    failed = errors.group_by(period, "compactor", "check").agg(
        pl.struct("run_id", "pair_id").n_unique().cast(pl.Int64).alias("failing_pairs"))
    periods_of: dict[Any, list[Any]] = {}
    for row in audited.iter_rows(named=True):
        periods_of.setdefault(row["compactor"], []).append(row[period])
    counts: dict[tuple[Any, str], dict[Any, int]] = {}
    for row in failed.iter_rows(named=True):
        counts.setdefault((row["compactor"], row["check"]), {})[row[period]] = row["failing_pairs"]
    rows = []
    for (compactor, check), by_period in counts.items():
        walked = periods_of.get(compactor, [])
        hits = [p for p in walked if p in by_period]
        streak = 0
        for p in reversed(walked):
            if p not in by_period:
                break
            streak += 1
        rows.append({
            "compactor": compactor, "check": check,
            "first_failed": hits[0] if hits else None,
            "since": walked[-streak] if streak else None,
            "streak": streak,
            "last_failed": hits[-1] if hits else None,
            "periods_failed": len(hits),
            "periods_audited": len(walked),
            "failing_pairs": sum(by_period.values()),
        })
    kind = order.schema[period]
    schema: dict[str, Any] = {
        "compactor": pl.String, "check": pl.String, "first_failed": kind, "since": kind,
        "streak": pl.Int64, "last_failed": kind, "periods_failed": pl.Int64,
        "periods_audited": pl.Int64, "failing_pairs": pl.Int64,
    }
    frame = pl.DataFrame(rows, schema=schema)
    return frame.sort(["streak", "failing_pairs", "compactor", "check"],
                      descending=[True, True, False, False], nulls_last=True).select(STREAK_COLUMNS)


def as_text(value: Any) -> str:
    """A period label as people read it."""
    return value.isoformat() if isinstance(value, date) else str(value)
