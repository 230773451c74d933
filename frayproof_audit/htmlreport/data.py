"""Everything the HTML report shows, computed from the dataset's tables with Polars.

The report is a view of committed runs judged by one contract: numbers of runs made with
different contracts are never added up unless `--contract all` asks for it. Which runs count
is `corpus.dataset.selection.choose_runs`'s, as for `stats` and `trend`: by default the runs of
the newest contract (its fingerprint, the hash of what it means), failed runs left out, and the
page names the runs it left out. The per-night series and their baselines are `trends.compute_trend`'s,
the same numbers `frayproof-audit trend` prints and gates on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import polars as pl

from frayproof_audit.checks import CHECK_NAMES
from frayproof_audit.corpus.dataset.selection import (
    RunInfo,
    Selection,
    active_conditions,
    choose_runs,
    contract_of,
    short,
)
from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.corpus.dataset.wilson import wilson
from frayproof_audit.corpus.store.failure_rule import Blame, failure_expr
from frayproof_audit.htmlreport.config import ReportConfig, ReportError
from frayproof_audit.htmlreport.tables import (
    check_table,
    code_table,
    compactor_table,
    nights_table,
    operator_table,
    order,
    with_intervals,
    with_zero_checks,
)
from frayproof_audit.htmlreport.worst import PairDetail, worst_pairs
from frayproof_audit.mutate.operators import OPERATORS
from frayproof_audit.trends.gate import DEFAULT_MIN_PAIRS, GateResult, find_regressions
from frayproof_audit.trends.series import Trend, TrendConfig, TrendError, compute_trend


@dataclass(frozen=True, slots=True)
class Totals:
    runs: int
    first_night: date | None
    """The first and last night of logs (of pairs with a `logged_at`)."""
    last_night: date | None
    pairs: int
    passed: int
    failed: int
    input_errors: int
    engine_errors: int
    caught: int
    survived: int
    skipped: int
    inherited: int = 0
    """Failing pairs not counted in `failed` (`--blame introduced`: every error inherited)."""

    @property
    def failure_rate(self) -> float | None:
        checked = self.passed + self.failed + self.inherited
        return self.failed / checked if checked else None

    @property
    def mutation_score(self) -> float | None:
        judged = self.caught + self.survived
        return self.caught / judged if judged else None


@dataclass(frozen=True, slots=True)
class Night:
    """One night of a series: `hits` of `total` (survivors of mutants judged, or failing pairs
    of pairs checked), the rate's 95% interval, and the baseline with its band (the median,
    lowest and highest rate of the earlier nights it is compared with)."""

    night: date
    hits: int
    total: int
    rate: float | None
    low: float | None
    high: float | None
    baseline: float | None = None
    band_low: float | None = None
    band_high: float | None = None
    worse: bool = False
    """Worse than the baseline beyond noise: the baseline lies below the whole interval."""


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    nights: tuple[Night, ...]


@dataclass(frozen=True, slots=True)
class ReportData:
    """The report's content; `page.render_page` turns it into HTML."""

    out: str
    generated_at: datetime
    config: ReportConfig
    totals: Totals
    runs: pl.DataFrame
    left_out: tuple[str, ...]
    """Committed runs with rows in the selection not covered: judged with another contract than
    the report's, failed, or rejudged copies superseded by their original."""
    contract_text: str
    contract_path: str | None
    contract_key: str
    nights: pl.DataFrame
    checks: pl.DataFrame
    codes: pl.DataFrame
    compactors: pl.DataFrame
    operators: pl.DataFrame
    streaks: pl.DataFrame
    """Compactor × check pairs that ever failed: since when, and the current streak."""
    failure_trend: Series | None
    """Pairs failing any check, per night (None: no pair had a `logged_at`)."""
    check_trends: tuple[Series, ...]
    operator_trends: tuple[Series, ...]
    undated: int
    """Pairs with no usable `logged_at`: in the tables, not in the per-night charts."""
    gate: GateResult | None
    """The latest night's checks and operators worse than their baseline beyond noise and by more
    than `config.points` (the regression gate of `trend`, with its default minimum of pairs)."""
    failing_pairs: tuple[PairDetail, ...]
    failing_total: int
    blind_pairs: tuple[PairDetail, ...]
    blind_total: int
    notes: tuple[str, ...] = ()
    """What was left out and why, one line per kind (as `stats` and `trend` say it)."""


_RUN_COLUMNS = ("run_id", "started_at", "pairs", "passed", "failed", "input_errors", "engine_errors",
                "mutants_caught", "mutants_survived", "mutants_skipped", "not_audited_shards",
                "contract_path")


def choose_report_runs(config: ReportConfig) -> tuple[list[RunInfo], tuple[str, ...], tuple[str, ...]]:
    """The runs the report covers (oldest first), the committed runs with rows in its days it
    leaves out, and the lines that say why. Runs named with `--run` must share one contract
    unless `--contract` says otherwise."""
    asked = Selection(runs=config.runs, since=config.since, until=config.until, contract=config.contract)
    chosen = choose_runs(config.out, asked)
    if not chosen.runs:
        dated = config.since is not None or config.until is not None
        why = " ".join(chosen.notes()) if chosen.left_out else (
            "in those days" if dated else ": audit into it first")
        raise ReportError(f"'{config.out}' holds no committed run with pairs {why}".replace(" :", ":"))
    return (list(chosen.runs), tuple(item.run.run_id for item in chosen.left_out), chosen.notes())


def _names(items: Sequence[str], cap: int = 20) -> str:
    shown = ", ".join(items[:cap])
    return shown + (f" and {len(items) - cap} more" if len(items) > cap else "")


def gather(config: ReportConfig) -> ReportData:
    """Read the dataset and compute every section of the report."""
    if config.worst < 0 or config.baseline < 1 or config.points < 0:
        raise ReportError("the worst-pairs cap and --regression-points must be 0 or more, and "
                          "--baseline at least 1 night")
    runs, left_out, notes = choose_report_runs(config)
    selection = Selection(runs=tuple(run.run_id for run in runs), since=config.since, until=config.until,
                          compactors=config.compactors, contract="all")
    pairs, findings, mutants = (selection.apply(read_table(config.out, table))
                                for table in ("pairs", "findings", "mutants"))
    if config.compactors:
        _known_compactors(config, pairs, selection)
    (nights, checks, codes, compactors, operators, status_counts, mutant_counts, run_rows,
     failures) = pl.collect_all([
        nights_table(pairs, config.blame), check_table(pairs, findings, config.blame),
        code_table(pairs, findings, config.blame),
        compactor_table(pairs, mutants, config.blame), operator_table(mutants),
        pairs.group_by("status").len(), mutants.group_by("status").len(),
        read_table(config.out, "runs").filter(pl.col("run_id").is_in(list(selection.runs)))
        .select(*_RUN_COLUMNS).sort("started_at", "run_id"),
        pairs.select(failure_expr(config.blame).sum().cast(pl.Int64)),
    ])
    status, mutant_status = dict(status_counts.iter_rows()), dict(mutant_counts.iter_rows())
    active = list(active_conditions(contract_of(runs)))
    try:
        trend: Trend | None = compute_trend(TrendConfig(config.out, selection, "night", config.baseline,
                                                        blame=config.blame))
    except TrendError:  # no pair has a logged_at: there are no nights to chart
        trend = None
    # nights of logs: a record without logged_at is filed under its run's day, which is no night
    dated = list(trend.periods) if trend is not None else []
    failing, failing_total = worst_pairs(pairs, findings, mutants, "fail", config.worst, config.blame)
    blind, blind_total = worst_pairs(pairs, findings, mutants, "blind", config.worst)
    latest = run_rows.row(run_rows.height - 1, named=True)
    return ReportData(
        out=str(config.out), generated_at=datetime.now(UTC), config=config,
        totals=Totals(
            runs=len(runs), first_night=dated[0] if dated else None,
            last_night=dated[-1] if dated else None, pairs=sum(status.values()),
            passed=status.get("pass", 0), failed=int(failures.item() or 0),
            input_errors=status.get("input_error", 0), engine_errors=status.get("engine_error", 0),
            caught=mutant_status.get("caught", 0), survived=mutant_status.get("survived", 0),
            skipped=mutant_status.get("skipped", 0), inherited=int(nights["inherited"].sum() or 0)),
        runs=run_rows, left_out=left_out, contract_text=runs[-1].contract_text,
        contract_path=latest["contract_path"], contract_key=short(runs[-1].contract),
        nights=nights, checks=with_zero_checks(checks, active, int(nights["checked"].sum())),
        codes=codes, compactors=compactors, operators=with_intervals(operators),
        streaks=trend.streaks if trend is not None else pl.DataFrame(),
        failure_trend=_failure_trend(trend), undated=trend.undated if trend is not None else 0,
        gate=find_regressions(trend, config.points) if trend is not None and len(trend.periods) > 1 else None,
        check_trends=_series(trend, "checks", "check", "failing_pairs", "pairs_checked", "pairs_checked",
                             CHECK_NAMES, config.points),
        operator_trends=_series(trend, "operators", "operator", "survived", "applicable", "pairs",
                                OPERATORS, config.points),
        failing_pairs=failing, failing_total=failing_total, blind_pairs=blind, blind_total=blind_total,
        notes=(*notes, *_blame_note(config.blame, int(nights["inherited"].sum() or 0))),
    )


def _blame_note(blame: Blame, inherited: int) -> tuple[str, ...]:
    """What `--blame` left out, when it left out something."""
    if not inherited:
        return ()
    return (f"{inherited:,} failing pair(s) are not counted as failures: every error of theirs"
            f" their before already held (inherited; --blame all counts them).",)


def _known_compactors(config: ReportConfig, pairs: pl.LazyFrame, selection: Selection) -> None:
    seen = set(pairs.select(pl.col("compactor").unique()).collect()["compactor"].to_list())
    missing = [name for name in config.compactors if name not in seen]
    if missing:
        known = (read_table(config.out, "pairs").filter(pl.col("run_id").is_in(list(selection.runs)))
                 .select(pl.col("compactor").drop_nulls().unique().sort()).collect()["compactor"])
        raise ReportError(f"no pairs of compactor {', '.join(map(repr, missing))} in the chosen runs"
                          f" (compactors: {_names(known.to_list())})")


def _series(trend: Trend | None, frame_name: str, key: str, hits: str, total: str, size: str,
            known: Sequence[str], points: float) -> tuple[Series, ...]:
    """One series per name of one of the trend's frames, in registry order."""
    if trend is None:
        return ()
    frame: pl.DataFrame = getattr(trend, frame_name)
    out = []
    for name in order(frame[key].unique().to_list(), known):
        rows = frame.filter(pl.col(key) == name).sort(trend.period).iter_rows(named=True)
        out.append(Series(name, tuple(_night(row, trend.period, hits, total, size, points) for row in rows)))
    return tuple(out)


def _night(row: dict[str, Any], period: str, hits: str, total: str, size: str, points: float) -> Night:
    """A row of a trend frame; `worse` as the regression gate judges it (beyond noise, by more
    than `points`, on enough pairs): a red dot is what `trend --fail-on-regression P` names."""
    worse = (bool(row["beyond_noise"]) and row["change"] is not None and row["change"] * 100 > points
             and row[size] >= DEFAULT_MIN_PAIRS)
    return Night(row[period], row[hits], row[total], row["rate"], row["low"], row["high"],
                 row["baseline"], row["baseline_min"], row["baseline_max"], worse)


def _failure_trend(trend: Trend | None) -> Series | None:
    """Pairs failing any check, per night, with the rate's interval (no baseline band: the
    per-check charts carry those)."""
    if trend is None:
        return None
    nights = []
    for row in trend.totals.iter_rows(named=True):
        checked = row["passed"] + row["failed"]
        rate = row["failed"] / checked if checked else None
        low, high = wilson(rate, checked) if rate is not None else (None, None)
        nights.append(Night(row[trend.period], row["failed"], checked, rate, low, high))
    return Series("all checks", tuple(nights))
