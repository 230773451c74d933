"""Per-check, per-condition-code and per-operator statistics over the committed runs of a dataset.

Computed with Polars lazy scans, so only the columns involved are read. A pair is counted as
`(run_id, pair_id)`: the same log audited on two nights is two pairs, never one.

Every name that was active shows up in every group that had something to judge, at zero if
nothing happened: each check the contract had running and each of its condition codes (plus
any other that has findings) in every group with pairs checked, each operator that ran in
every group where a mutant was judged (`all_groups`: in every group of the `by` keys present in
the selected pairs, placeholders included). Which runs count is `selection.choose_runs`'s: by
default the newest contract's, failed runs left out, and the output says what it left out.

Which failing pairs count is `corpus.store.failure_rule`'s (`--blame`): by default a pair fails only when its
compactor introduced an error (`failed`), and a check or code fails a pair (`failing_pairs`,
its failure rate) only by an introduced error; failing pairs whose every error before already
held are `inherited_failures`, checked but neither passed nor failed. `findings`, `errors` and
`warnings` count every finding, inherited or not.

Rates and intervals are those of `trend` and the report (docs/trends.md, "How the numbers are
computed"): a check's failure rate is over the pairs checked, with its Wilson interval over
them; an operator's survival rate is over the mutants judged, with its interval over the
*pairs* it applied to.

Findings of runs written before condition codes existed (tables schema 1) have a null `code`,
so they form one row per check with `code` null in the codes table.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

import polars as pl

from frayproof_audit.corpus.dataset.carried import carried_names, carried_value, with_carried
from frayproof_audit.corpus.dataset.selection import (
    Chosen,
    Selection,
    SelectionError,
    active_conditions,
    choose_runs,
    contract_of,
    short,
)
from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.corpus.dataset.text_table import text_table
from frayproof_audit.corpus.dataset.wilson import wilson_exprs
from frayproof_audit.corpus.inputs.field_map import CARRY_NAME
from frayproof_audit.corpus.run.audit_config import STATS_BY
from frayproof_audit.corpus.store.failure_rule import (
    DEFAULT_BLAME,
    Blame,
    counted_findings,
    failure_expr,
    inherited_expr,
)
from frayproof_audit.corpus.store.pair_status import PairStatus

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract

BY = STATS_BY
PAIR_COLUMNS = ("pairs", "passed", "failed", "input_errors", "engine_errors", "failure_rate",
                "inherited_failures")
CHECK_COLUMNS = (
    "check", "findings", "errors", "warnings", "pairs_affected", "failing_pairs",
    "pairs_checked", "failure_rate", "passing_pairs", "input_errors", "failure_low", "failure_high",
)
_FINDING_COLUMNS = CHECK_COLUMNS[1:]
CODE_COLUMNS = ("check", "code", *_FINDING_COLUMNS)
OPERATOR_COLUMNS = ("operator", "applicable", "caught", "survived", "skipped", "survival_rate",
                    "survival_low", "survival_high", "pairs")
"""New columns come last (`failure_low`/`failure_high`, the operators' `pairs`), so the
positions of older ones hold."""
_CODES_SINCE = 2
"""Tables schema version that added `findings.code`: older runs have no codes to list at zero."""
_RATES = ("failure_rate", "failure_low", "failure_high", "survival_rate", "survival_low",
          "survival_high")


class StatsError(SelectionError):
    """Unusable stats options (exit 2)."""


@dataclass(frozen=True, slots=True)
class Stats:
    """The stats tables, grouped by the `by` keys (none: the whole selection)."""

    by: tuple[str, ...]
    runs: int
    """Committed runs with rows in the selection."""
    pairs: pl.DataFrame
    """Per group: pairs, passed, failed, input_errors, engine_errors, failure_rate,
    inherited_failures."""
    checks: pl.DataFrame
    codes: pl.DataFrame
    """Like `checks`, one row per check and condition code (null for schema-1 findings)."""
    operators: pl.DataFrame
    contract: str | None = None
    """The contract key (fingerprint) every counted run shares (None: no run, or several
    contracts added up with `--contract all`)."""
    selection: Selection = field(default_factory=Selection)
    chosen: Chosen | None = None
    """The runs counted and those left out (contracts, failed runs), for the header."""
    blame: Blame = DEFAULT_BLAME
    """Which failing pairs and findings count (`corpus.store.failure_rule`)."""

    def tidy(self) -> pl.DataFrame:
        """All tables in one long frame, for CSV and Parquet: a `table` column says which, `name`
        is the check or operator (null for `pairs` rows), and `code` (last, so older column
        positions hold) the code."""
        frames = [
            self.checks.rename({"check": "name"}).with_columns(pl.lit("checks").alias("table")),
            self.codes.rename({"check": "name"}).with_columns(pl.lit("codes").alias("table")),
            self.operators.rename({"operator": "name"}).with_columns(pl.lit("operators").alias("table")),
            self.pairs.with_columns(pl.lit("pairs").alias("table"), pl.lit(None, pl.String).alias("name")),
        ]
        keys = list(self.by)
        combined = pl.concat(frames, how="diagonal_relaxed")
        rest = [c for c in combined.columns if c not in ("table", *keys, "name", "code")]
        return combined.select("table", *keys, "name", *rest, "code")

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": list(self.by),
            "runs": self.runs,
            "blame": str(self.blame),
            "contract": self.contract,
            "contracts": list(self.chosen.contracts) if self.chosen else [],
            "left_out": self.chosen.to_dict() if self.chosen else [],
            "filters": self.selection.describe_rows() or None,
            "pairs": [_plain(row) for row in self.pairs.to_dicts()],
            "checks": [_plain(row) for row in self.checks.to_dicts()],
            "codes": [_plain(row) for row in self.codes.to_dicts()],
            "operators": [_plain(row) for row in self.operators.to_dicts()],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_text(self) -> str:
        head = f"{self.runs} committed run(s)" + (f", by {', '.join(self.by)}" if self.by else "")
        if self.contract is not None:
            head += f", contract {short(self.contract)}"
        elif self.chosen is not None and len(self.chosen.contracts) > 1:
            head += f", {len(self.chosen.contracts)} contracts added up (--contract all): " + ", ".join(
                map(short, self.chosen.contracts))
        if self.selection.describe_rows():
            head += f" ({self.selection.describe_rows()})"
        notes = list(self.chosen.notes()) if self.chosen else []
        notes += _blame_note(self.blame, int(self.pairs["inherited_failures"].sum() or 0))
        return "\n".join([
            head,
            *notes,
            "",
            "Pairs",
            text_table(self.pairs, _RATES),
            "",
            "Checks",
            text_table(self.checks, _RATES),
            "",
            "Condition codes",
            *self._codes_text(),
            "",
            "Mutation operators (survival over the mutants judged; survival_low/high: its 95% Wilson"
            " interval over the pairs the operator applied to)",
            text_table(self.operators, _RATES),
        ])


    def _codes_text(self) -> list[str]:
        """The codes table without the codes that have no finding anywhere (those are named on
        one line instead: every active check has many codes, most of them quiet)."""
        fired = pl.col("findings").sum().over("check", "code") > 0
        quiet = self.codes.filter(~fired).select("check", "code").unique(maintain_order=True)
        lines = [text_table(self.codes.filter(fired), _RATES)]
        if quiet.height:
            names = ", ".join(code or f"{check} (no code)" for check, code in quiet.iter_rows())
            lines.append(textwrap.fill(f"No findings (0 in every row, listed in json and csv): {names}",
                                       width=100, initial_indent="  ", subsequent_indent="    ",
                                       break_on_hyphens=False))
        return lines


def _blame_note(blame: Blame, inherited: int) -> list[str]:
    """What `--blame` changed, in one line (none when it changed nothing)."""
    if blame is Blame.ALL:
        return ["Blame all: every failing pair counts, inherited errors included (frayproof's reading)."]
    if not inherited:
        return []
    return [f"Blame introduced: {inherited:,} failing pair(s) whose every error their before already"
            " held are inherited_failures, not failures (--blame all counts them)."]


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() if isinstance(v, date) else v) for k, v in row.items()}


def _keys(by: str | Sequence[str] | None) -> tuple[str, ...]:
    """The `by` keys, each once; a name not in `BY` must be a carried field's (`_carry`)."""
    names = (by,) if isinstance(by, str) else tuple(by or ())
    for name in names:
        if name not in BY and not CARRY_NAME.fullmatch(name):
            raise StatsError(f"unknown --by {name!r} (choose {', '.join(BY)}, or a field the runs"
                             " carried)")
    return tuple(dict.fromkeys(names))


def _carry(pairs: pl.LazyFrame, findings: pl.LazyFrame, mutants: pl.LazyFrame,
           keys: list[str]) -> tuple[pl.LazyFrame, pl.LazyFrame, pl.LazyFrame]:
    """The tables with a column for every key that is a carried field (`--carry`), or
    `StatsError` for a key that is neither a column of `BY` nor a field the pairs carry."""
    extra = [key for key in keys if key not in BY]
    if not extra:
        return pairs, findings, mutants
    known = carried_names(pairs)
    for key in extra:
        if key not in known:
            carried = f" or a field the selected runs carry: {', '.join(known)}" if known else (
                "; the selected runs carry no field (audit --carry NAME=PATH)")
            raise StatsError(f"unknown --by {key!r} (choose {', '.join(BY)}{carried})")
    pairs = pairs.with_columns(carried_value(key) for key in extra)
    findings, mutants = with_carried((findings, mutants), pairs, extra)
    return pairs, findings, mutants


def compute_stats(
    out: str | os.PathLike[str],
    by: str | Sequence[str] | None = None,
    selection: Selection | None = None,
    all_groups: bool = False,
    blame: Blame = DEFAULT_BLAME,
) -> Stats:
    """Pairs, per-check, per-code and per-operator tables over the committed runs in `out` that
    `selection` keeps (`selection.choose_runs`), grouped by every key in `by` at once
    (`("compactor", "log_date")`). The check, code and operator tables hold the groups that had
    something to judge (`all_groups`: every group, placeholders included). `blame` says which
    failing pairs and findings count (`corpus.store.failure_rule`).

    Raises `StatsError` for an unknown key, `MixedContracts` when runs named with `--run` mix
    contracts and no `--contract` was given, `DatasetError` when OUT is not a dataset.
    """
    keys = list(_keys(by))
    asked = selection or Selection()
    chosen = choose_runs(out, asked)
    runs = list(chosen.runs)
    # no run chosen: select none (no run id is empty), never every run
    selection = asked.of_runs(runs) if runs else Selection(("",))
    per_run = "run_id" in keys and len(chosen.contracts) > 1
    if per_run:  # grouped by run: each row is one run, judged by its own contract
        named = [(run, *_names(contract_of([run]))) for run in runs]
        active = [(run.run_id, *name) for run, names, _ in named for name in names]
        active_codes = [(run.run_id, *name) for run, _, codes in named for name in codes
                        if run.schema_version >= _CODES_SINCE]
    else:
        active, active_codes = [], []
        for key in chosen.contracts:  # `--contract all`: every contract's names, in order
            ran = [run for run in runs if run.contract == key]
            its_names, its_codes = _names(contract_of(ran))
            active += [name for name in its_names if name not in active]
            if any(run.schema_version >= _CODES_SINCE for run in ran):
                active_codes += [code for code in its_codes if code not in active_codes]
    scope = ["run_id"] if per_run else []
    pairs = selection.apply(read_table(out, "pairs"))
    findings = selection.apply(read_table(out, "findings")).with_columns(
        counted_findings(blame).alias("_counted"))
    mutants = selection.apply(read_table(out, "mutants"))
    pairs, findings, mutants = _carry(pairs, findings, mutants, keys)
    group: list[str | pl.Expr] = [*keys] if keys else [pl.lit(0).alias("_all")]
    status = pl.col("status")
    counts = pairs.group_by(group).agg(
        pl.len().cast(pl.Int64).alias("pairs"),
        *(expr.sum().cast(pl.Int64).alias(name) for name, expr in (
            ("passed", status == PairStatus.PASS), ("failed", failure_expr(blame)),
            ("inherited_failures", inherited_expr(blame)),
            ("input_errors", status == PairStatus.INPUT_ERROR),
            ("engine_errors", status == PairStatus.ENGINE_ERROR))),
    ).with_columns((pl.col("passed") + pl.col("failed") + pl.col("inherited_failures"))
                   .alias("checked"))
    checked = pl.col("checked")
    pair_table = (counts.with_columns(pl.when(checked > 0).then(pl.col("failed") / checked)
                                      .alias("failure_rate"))
                  .sort(keys or "_all", nulls_last=True).select(*keys, *PAIR_COLUMNS))
    groups = counts.select(*(keys or ["_all"]), "checked", "input_errors", "engine_errors")
    checks = _finding_stats(findings, groups, keys, scope, ["check"], active)
    codes = _finding_stats(findings, groups, keys, scope, ["check", "code"], active_codes)
    operators = _operator_stats(mutants, groups, keys)
    if keys and not all_groups:  # a group with nothing judged only holds placeholders
        checks = checks.filter(pl.col("pairs_checked") > 0)
        codes = codes.filter(pl.col("pairs_checked") > 0)
        operators = operators.filter(pl.col("applicable").sum().over(keys) > 0)
    frames = pl.collect_all([pair_table, checks.select(*keys, *CHECK_COLUMNS),
                             codes.select(*keys, *CODE_COLUMNS), operators])
    return Stats(tuple(keys), len(runs), frames[0], frames[1], frames[2], frames[3],
                 chosen.contract, asked, chosen, blame)


def _names(contract: Contract | None) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The active (check,) and (check, code) names of `contract`, in report order."""
    conditions = active_conditions(contract)
    return ([(name,) for name in conditions],
            [(name, code) for name, codes in conditions.items() for code in codes])


def _finding_stats(
    findings: pl.LazyFrame, groups: pl.LazyFrame, keys: list[str], scope: list[str],
    names: list[str], active: list[tuple[str, ...]],
) -> pl.LazyFrame:
    """Findings, errors, warnings and affected/failing pairs per group × name (`names`: check,
    or check and code), for every active name and every name with findings, in every group.
    With `scope` (`["run_id"]`: runs of several contracts), `active` names are per run."""
    pair_key = pl.struct("run_id", "pair_id")
    group_keys = keys or ["_all"]
    frame = findings if keys else findings.with_columns(pl.lit(0).alias("_all"))
    grouped = frame.group_by([*group_keys, *names]).agg(
        pl.len().cast(pl.Int64).alias("findings"),
        (pl.col("severity") == "error").sum().cast(pl.Int64).alias("errors"),
        (pl.col("severity") == "warning").sum().cast(pl.Int64).alias("warnings"),
        pair_key.n_unique().cast(pl.Int64).alias("pairs_affected"),
        pair_key.filter((pl.col("severity") == "error") & pl.col("_counted")).n_unique()
        .cast(pl.Int64).alias("failing_pairs"),
    )
    named = [*scope, *names]
    known = pl.DataFrame(active, schema={n: pl.String for n in named}, orient="row").lazy()
    seen = frame.select(named).unique()
    every = (pl.concat([known.with_row_index("_order"),
                        seen.join(known, on=named, how="anti", nulls_equal=True)
                        .sort(named, nulls_last=True).with_row_index("_order")
                        .with_columns(pl.col("_order") + len(active))])
             .select("_order", *named))
    counted = ("findings", "errors", "warnings", "pairs_affected", "failing_pairs")
    return (
        (groups.join(every, on=scope) if scope else groups.join(every, how="cross"))
        .join(grouped, on=[*group_keys, *names], how="left", nulls_equal=True)
        .with_columns(pl.col(*counted).fill_null(0))
        .with_columns(pl.col("checked").alias("pairs_checked"))
        .with_columns(
            pl.when(pl.col("pairs_checked") > 0)
            .then(pl.col("failing_pairs") / pl.col("pairs_checked")).alias("failure_rate"),
            (pl.col("pairs_checked") - pl.col("failing_pairs")).alias("passing_pairs"),
        )
        .with_columns(wilson_exprs(pl.col("failure_rate"), pl.col("pairs_checked"),
                                  "failure_low", "failure_high"))
        .sort([*group_keys, "_order"], nulls_last=True)
    )


def _operator_stats(mutants: pl.LazyFrame, groups: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """Caught, survived, skipped, the pairs the operator applied to, and survival (with its
    Wilson interval over those pairs: the mutants of one pair share its compaction and are far
    from independent trials) per group × operator, for every operator that ran, in every group."""
    group_keys = keys or ["_all"]
    frame = mutants if keys else mutants.with_columns(pl.lit(0).alias("_all"))
    counts = frame.group_by([*group_keys, "operator"]).agg(
        *((pl.col("status") == name).sum().cast(pl.Int64).alias(name)
          for name in ("caught", "survived", "skipped")),
        pl.struct("run_id", "pair_id").filter(pl.col("status") != "skipped").n_unique()
        .cast(pl.Int64).alias("pairs"),
    )
    operators = frame.select("operator").unique()
    survival = pl.col("survived") / pl.col("applicable")
    return (
        groups.select(group_keys).join(operators, how="cross")
        .join(counts, on=[*group_keys, "operator"], how="left", nulls_equal=True)
        .with_columns(pl.col("caught", "survived", "skipped", "pairs").fill_null(0))
        .with_columns((pl.col("caught") + pl.col("survived")).alias("applicable"))
        .with_columns(pl.when(pl.col("applicable") > 0).then(survival).alias("survival_rate"))
        .with_columns(wilson_exprs(pl.col("survival_rate"), pl.col("pairs"),
                                  "survival_low", "survival_high"))
        .sort([*group_keys, "operator"], nulls_last=True)
        .select(*keys, *OPERATOR_COLUMNS)
    )
