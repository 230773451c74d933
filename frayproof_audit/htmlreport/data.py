"""Everything the HTML report shows, computed from the dataset's tables with Polars.

The report is a view of committed runs judged by one contract: numbers of runs made with
different contracts are never added up. Unless `--run` picks runs, the report covers the runs
that share the latest run's contract (its fingerprint, the hash of what it means) and names
the runs it left out.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime

import polars as pl

from frayproof_audit.checks import BY_KEY, CHECK_NAMES
from frayproof_audit.corpus.dataset_reader import read_table
from frayproof_audit.errors import InputError
from frayproof_audit.htmlreport.config import ReportConfig, ReportError
from frayproof_audit.htmlreport.nightly import failure_by_night, survival_by_night, wilson, with_baseline
from frayproof_audit.mutate.operators import OPERATORS, get_operator

DETAIL_CAP = 15
"""Findings, and surviving mutants, shown per pair; the rest are counted."""


@dataclass(frozen=True, slots=True)
class Totals:
    runs: int
    first_night: date | None
    last_night: date | None
    pairs: int
    passed: int
    failed: int
    input_errors: int
    engine_errors: int
    caught: int
    survived: int
    skipped: int

    @property
    def failure_rate(self) -> float | None:
        checked = self.passed + self.failed
        return self.failed / checked if checked else None

    @property
    def mutation_score(self) -> float | None:
        judged = self.caught + self.survived
        return self.caught / judged if judged else None


@dataclass(frozen=True, slots=True)
class Night:
    """One night of a series: `hits` of `total` (survivors of mutants judged, or failing pairs
    of pairs checked), the 95% interval, and the trailing baseline with its band."""

    night: date
    hits: int
    total: int
    low: float | None
    high: float | None
    baseline: float | None
    band_low: float | None
    band_high: float | None

    @property
    def rate(self) -> float | None:
        return self.hits / self.total if self.total else None


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    nights: tuple[Night, ...]


@dataclass(frozen=True, slots=True)
class Finding:
    check: str
    code: str | None
    severity: str
    where: str
    message: str


@dataclass(frozen=True, slots=True)
class Survivor:
    operator: str
    sites: tuple[str, ...]
    description: str
    rule: str
    """The contract rule that would catch it (the operator's survivor hint)."""


@dataclass(frozen=True, slots=True)
class PairDetail:
    run_id: str
    pair_id: str
    compactor: str | None
    night: date
    source: str
    source_row: int
    errors: int
    warnings: int
    survived: int
    findings: tuple[Finding, ...]
    more_findings: int
    survivors: tuple[Survivor, ...]
    more_survivors: int


@dataclass(frozen=True, slots=True)
class ReportData:
    """The report's content; `page.render_page` turns it into HTML."""

    out: str
    generated_at: datetime
    config: ReportConfig
    totals: Totals
    runs: pl.DataFrame
    left_out: tuple[str, ...]
    """Committed runs not covered: judged with another contract than the report's."""
    contract_text: str
    contract_path: str | None
    contract_key: str
    nights: pl.DataFrame
    checks: pl.DataFrame
    codes: pl.DataFrame
    compactors: pl.DataFrame
    operators: pl.DataFrame
    failure_trend: Series
    """Pairs failing any check, per night."""
    check_trends: tuple[Series, ...]
    operator_trends: tuple[Series, ...]
    failing_pairs: tuple[PairDetail, ...]
    failing_total: int
    blind_pairs: tuple[PairDetail, ...]
    blind_total: int


_RUN_COLUMNS = ("run_id", "started_at", "pairs", "passed", "failed", "input_errors", "engine_errors",
                "mutants_caught", "mutants_survived", "mutants_skipped", "not_audited_shards",
                "contract_path", "contract_sha256", "contract_fingerprint", "contract_text")


def _contract_key() -> pl.Expr:
    """Runs are comparable when their contracts mean the same; runs older than the fingerprint
    fall back to the hash of the contract text."""
    return pl.coalesce(pl.col("contract_fingerprint"), pl.lit("sha256:") + pl.col("contract_sha256"))


def choose_runs(out: str | os.PathLike[str], runs: Sequence[str]) -> tuple[pl.DataFrame, tuple[str, ...]]:
    """The runs the report covers (sorted by start) and the committed runs it leaves out."""
    every = (read_table(out, "runs").select(*_RUN_COLUMNS).with_columns(_contract_key().alias("contract_key"))
             .sort("started_at", "run_id").collect())
    if every.height == 0:
        raise ReportError(f"'{out}' holds no committed run: audit into it first")
    if runs:
        unknown = sorted(set(runs) - set(every["run_id"]))
        if unknown:
            raise ReportError(f"no committed run {', '.join(map(repr, unknown))} in '{out}'"
                              f" (runs: {_names(every['run_id'].to_list())})")
        every = every.filter(pl.col("run_id").is_in(list(runs)))
        keys = every["contract_key"].unique().to_list()
        if len(keys) > 1:
            groups = [_names(every.filter(pl.col("contract_key") == key)["run_id"].to_list()) for key in keys]
            raise ReportError("the runs were judged with different contracts, whose numbers cannot be "
                              "added up: " + "; ".join(groups) + ". Pick runs of one contract with --run")
        return every, ()
    latest = every["contract_key"][-1]
    chosen = every.filter(pl.col("contract_key") == latest)
    return chosen, tuple(every.filter(pl.col("contract_key") != latest)["run_id"].to_list())


def _names(items: list[str], cap: int = 8) -> str:
    shown = ", ".join(items[:cap])
    return shown + (f" and {len(items) - cap} more" if len(items) > cap else "")


def _active_checks(contract_text: str) -> list[str]:
    """The checks the contract enables, in report order (empty when its text cannot be parsed
    here, e.g. tool schemas in files that moved: then the checks with findings stand alone)."""
    from frayproof_audit.contract import parse_contract

    try:
        contract = parse_contract(contract_text)
    except (InputError, OSError):
        return []
    return [BY_KEY[key].name for key, settings in contract.checks.items()
            if settings.enabled and key in BY_KEY]


def _order(names: Sequence[str], known: Sequence[str]) -> list[str]:
    position = {name: i for i, name in enumerate(known)}
    return sorted(set(names), key=lambda name: (position.get(name, len(known)), name))


def gather(config: ReportConfig) -> ReportData:
    """Read the dataset once per table and compute every section of the report."""
    if config.worst < 0 or config.baseline < 1:
        raise ReportError("the worst-pairs cap must be 0 or more and --baseline at least 1 night")
    runs, left_out = choose_runs(config.out, config.runs)
    run_ids = runs["run_id"].to_list()

    def scan(table: str) -> pl.LazyFrame:
        frame = read_table(config.out, table).filter(pl.col("run_id").is_in(run_ids))
        if config.compactors:
            frame = frame.filter(pl.col("compactor").is_in(list(config.compactors)))
        return frame

    pairs, findings, mutants = scan("pairs"), scan("findings"), scan("mutants")
    if config.compactors:
        seen = set(pairs.select(pl.col("compactor").unique()).collect()["compactor"].to_list())
        missing = sorted(set(config.compactors) - seen)
        if missing:
            known = (read_table(config.out, "pairs").filter(pl.col("run_id").is_in(run_ids))
                     .select(pl.col("compactor").drop_nulls().unique().sort()).collect()["compactor"])
            raise ReportError(f"no pairs of compactor {', '.join(map(repr, missing))} in the chosen runs"
                              f" (compactors: {_names(known.to_list(), 20)})")
    latest = runs.row(runs.height - 1, named=True)
    active = _active_checks(latest["contract_text"])
    (nights, checks, codes, compactors, operators, by_night_ops, by_night_checks,
     status_counts, mutant_counts) = pl.collect_all([
        _nights(pairs), _check_table(pairs, findings), _code_table(pairs, findings),
        _compactor_table(pairs, mutants), _operator_table(mutants),
        survival_by_night(mutants), failure_by_night(pairs, findings),
        pairs.group_by("status").len(), mutants.group_by("status").len(),
    ])
    status = dict(status_counts.iter_rows())
    mutant_status = dict(mutant_counts.iter_rows())
    checks = _with_zero_checks(checks, active, int(nights["checked"].sum()))
    operators = _with_intervals(operators)
    night_list = nights["log_date"].to_list()
    totals = Totals(
        runs=runs.height, first_night=night_list[0] if night_list else None,
        last_night=night_list[-1] if night_list else None, pairs=sum(status.values()),
        passed=status.get("pass", 0), failed=status.get("fail", 0),
        input_errors=status.get("input_error", 0), engine_errors=status.get("engine_error", 0),
        caught=mutant_status.get("caught", 0), survived=mutant_status.get("survived", 0),
        skipped=mutant_status.get("skipped", 0),
    )
    failing, failing_total = _worst(pairs, findings, mutants, "fail", config.worst)
    blind, blind_total = _worst(pairs, findings, mutants, "blind", config.worst)
    return ReportData(
        out=str(config.out), generated_at=datetime.now(UTC), config=config, totals=totals,
        runs=runs.drop("contract_text"), left_out=left_out,
        contract_text=latest["contract_text"], contract_path=latest["contract_path"],
        contract_key=latest["contract_key"], nights=nights, checks=checks, codes=codes,
        compactors=compactors, operators=operators,
        failure_trend=_series(
            nights.select("log_date", pl.lit("all checks").alias("name"), "failed", "checked"),
            "name", "failed", "checked", night_list, ["all checks"], config.baseline)[0],
        check_trends=_series(by_night_checks, "check", "failing", "total", night_list,
                             _order(checks["check"].to_list(), CHECK_NAMES), config.baseline, nights),
        operator_trends=_series(by_night_ops, "operator", "survived", "applicable", night_list,
                                _order(operators["operator"].to_list(), OPERATORS), config.baseline),
        failing_pairs=failing, failing_total=failing_total, blind_pairs=blind, blind_total=blind_total,
    )


def _rate(hits: str, total: str, name: str) -> pl.Expr:
    return pl.when(pl.col(total) > 0).then(pl.col(hits) / pl.col(total)).alias(name)


def _count(condition: pl.Expr, name: str) -> pl.Expr:
    return condition.sum().cast(pl.Int64).alias(name)


def _nights(pairs: pl.LazyFrame) -> pl.LazyFrame:
    status = pl.col("status")
    return (
        pairs.group_by("log_date")
        .agg(pl.len().cast(pl.Int64).alias("pairs"), _count(status == "pass", "passed"),
             _count(status == "fail", "failed"), _count(status == "input_error", "input_errors"),
             _count(status == "engine_error", "engine_errors"))
        .with_columns((pl.col("passed") + pl.col("failed")).alias("checked"))
        .with_columns(_rate("failed", "checked", "failure_rate"))
        .sort("log_date")
    )


def _checked(pairs: pl.LazyFrame) -> pl.LazyFrame:
    return (pairs.filter(pl.col("status").is_in(["pass", "fail"]))
            .select(pl.len().cast(pl.Int64).alias("checked")))


def _finding_counts(findings: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    pair = pl.struct("run_id", "pair_id")
    return findings.group_by(keys).agg(
        pl.len().cast(pl.Int64).alias("findings"),
        _count(pl.col("severity") == "error", "errors"),
        _count(pl.col("severity") == "warning", "warnings"),
        pair.filter(pl.col("severity") == "error").n_unique().cast(pl.Int64).alias("failing_pairs"),
    )


def _check_table(pairs: pl.LazyFrame, findings: pl.LazyFrame) -> pl.LazyFrame:
    return (_finding_counts(findings, ["check"]).join(_checked(pairs), how="cross")
            .with_columns(_rate("failing_pairs", "checked", "failure_rate")))


def _code_table(pairs: pl.LazyFrame, findings: pl.LazyFrame) -> pl.LazyFrame:
    return (_finding_counts(findings, ["check", "code"]).join(_checked(pairs), how="cross")
            .with_columns(_rate("failing_pairs", "checked", "failure_rate"))
            .sort(["failing_pairs", "findings", "check", "code"], descending=[True, True, False, False],
                  nulls_last=True))


def _with_zero_checks(checks: pl.DataFrame, active: list[str], checked: int) -> pl.DataFrame:
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
    order = _order(checks["check"].to_list(), CHECK_NAMES)
    return checks.with_columns(pl.col("check").replace_strict(order, list(range(len(order))),
                                                              return_dtype=pl.Int64).alias("_o")
                               ).sort("_o").drop("_o")


def _compactor_table(pairs: pl.LazyFrame, mutants: pl.LazyFrame) -> pl.LazyFrame:
    status = pl.col("status")
    by_pairs = (
        pairs.group_by("compactor")
        .agg(pl.len().cast(pl.Int64).alias("pairs"), _count(status == "pass", "passed"),
             _count(status == "fail", "failed"), _count(status == "input_error", "input_errors"))
        .with_columns((pl.col("passed") + pl.col("failed")).alias("checked"))
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


def _operator_table(mutants: pl.LazyFrame) -> pl.LazyFrame:
    status = pl.col("status")
    return (
        mutants.group_by("operator")
        .agg(_count(status == "caught", "caught"), _count(status == "survived", "survived"),
             _count(status == "skipped", "skipped"))
        .with_columns((pl.col("caught") + pl.col("survived")).alias("applicable"))
        .with_columns(_rate("survived", "applicable", "survival_rate"))
        .select("operator", "applicable", "caught", "survived", "skipped", "survival_rate")
        .sort("operator")
    )


def _with_intervals(operators: pl.DataFrame) -> pl.DataFrame:
    """The operators table in registry order, each row with the 95% (Wilson) interval of its
    survival rate, so 1 survivor of 3 does not read like a third of all faults getting through."""
    rows = {row["operator"]: row for row in operators.to_dicts()}
    ordered = [rows[name] for name in _order(list(rows), OPERATORS)]
    bounds = [wilson(row["survived"], row["applicable"]) or (None, None) for row in ordered]
    return pl.DataFrame(ordered, schema=operators.schema).with_columns(
        pl.Series("low", [b[0] for b in bounds], dtype=pl.Float64),
        pl.Series("high", [b[1] for b in bounds], dtype=pl.Float64),
    )


def _series(frame: pl.DataFrame, key: str, hits: str, total: str, nights: list[date], names: list[str],
            baseline: int, night_totals: pl.DataFrame | None = None) -> tuple[Series, ...]:
    counts = {(row["log_date"], row[key]): (row[hits], row[total]) for row in frame.to_dicts()}
    checked = dict(night_totals.select("log_date", "checked").iter_rows()) if night_totals is not None else {}
    series = []
    for name in names:
        points = [counts.get((night, name), (0, checked.get(night, 0))) for night in nights]
        baselines = with_baseline(points, baseline)
        rows = []
        for night, (h, t), (centre, band_low, band_high) in zip(nights, points, baselines, strict=True):
            low, high = wilson(h, t) or (None, None)
            rows.append(Night(night, h, t, low, high, centre, band_low, band_high))
        series.append(Series(name, tuple(rows)))
    return tuple(series)


def _where(snapshot: str, index: int | None, call_id: str | None, pin: str | None, rule: str | None) -> str:
    where = f"{snapshot}[{index}]" if index is not None else snapshot
    labelled = (("call", call_id), ("pin", pin), ("rule", rule))
    extra = [f"{label} {value}" for label, value in labelled if value]
    return where + (f" ({', '.join(extra)})" if extra else "")


def _worst(pairs: pl.LazyFrame, findings: pl.LazyFrame, mutants: pl.LazyFrame, kind: str,
           cap: int) -> tuple[tuple[PairDetail, ...], int]:
    """The failing pairs with the most errors (`fail`), or the passing pairs with the most
    surviving mutants (`blind`), with their findings and survivors."""
    if kind == "fail":
        chosen = pairs.filter(pl.col("status") == "fail")
        order = ["errors", "warnings", "log_date", "pair_id"]
    else:
        chosen = pairs.filter(pl.col("mutants_survived") > 0)
        order = ["mutants_survived", "log_date", "pair_id"]
    chosen = chosen.sort(order, descending=[True] * (len(order) - 2) + [False, False], nulls_last=True)
    total, top = pl.collect_all([chosen.select(pl.len()), chosen.head(cap)])
    if top.height == 0:
        return (), int(total.item())
    keys = top.select("run_id", "pair_id").lazy()
    found, survived = pl.collect_all([
        findings.join(keys, on=["run_id", "pair_id"], how="semi"),
        mutants.filter(pl.col("status") == "survived").join(keys, on=["run_id", "pair_id"], how="semi"),
    ])
    by_pair_findings: dict[tuple[str, str], list[Finding]] = {}
    for row in found.iter_rows(named=True):
        by_pair_findings.setdefault((row["run_id"], row["pair_id"]), []).append(Finding(
            row["check"], row["code"], row["severity"],
            _where(row["snapshot"], row["message_index"], row["tool_call_id"], row["pin"], row["rule"]),
            row["message"]))
    by_pair_survivors: dict[tuple[str, str], list[Survivor]] = {}
    for row in survived.iter_rows(named=True):
        rule = row["reason"] or _hint(row["operator"])
        by_pair_survivors.setdefault((row["run_id"], row["pair_id"]), []).append(Survivor(
            row["operator"], tuple(row["sites"]), row["description"] or "", rule))
    details = []
    for row in top.iter_rows(named=True):
        key = (row["run_id"], row["pair_id"])
        items = by_pair_findings.get(key, [])
        survivors = by_pair_survivors.get(key, [])
        details.append(PairDetail(
            row["run_id"], row["pair_id"], row["compactor"], row["log_date"], row["source"],
            row["source_row"], row["errors"] or 0, row["warnings"] or 0, row["mutants_survived"] or 0,
            tuple(items[:DETAIL_CAP]), max(len(items) - DETAIL_CAP, 0),
            tuple(survivors[:DETAIL_CAP]), max(len(survivors) - DETAIL_CAP, 0)))
    return tuple(details), int(total.item())


def _hint(operator: str) -> str:
    try:
        return get_operator(operator).survivor_hint
    except KeyError:
        return ""
