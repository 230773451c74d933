"""The worst pairs of a report: failing pairs with their findings, and passing pairs with the
mutants that survived on them, each with the site it changed and the contract rule that would
have caught it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import polars as pl

from frayproof_audit.corpus.store.failure_rule import DEFAULT_BLAME, Blame, failure_expr
from frayproof_audit.mutate.operators import get_operator

DETAIL_CAP = 15
"""Findings, and surviving mutants, shown per pair; the rest are counted."""


@dataclass(frozen=True, slots=True)
class ShownFinding:
    """A finding as the page shows it: its place (`where`) written out."""

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
    findings: tuple[ShownFinding, ...]
    more_findings: int
    survivors: tuple[Survivor, ...]
    more_survivors: int


def _where(snapshot: str, index: int | None, call_id: str | None, pin: str | None,
           rule: str | None) -> str:
    where = f"{snapshot}[{index}]" if index is not None else snapshot
    labelled = (("call", call_id), ("pin", pin), ("rule", rule))
    extra = [f"{label} {value}" for label, value in labelled if value]
    return where + (f" ({', '.join(extra)})" if extra else "")


def worst_pairs(pairs: pl.LazyFrame, findings: pl.LazyFrame, mutants: pl.LazyFrame, kind: str,
           cap: int, blame: Blame = DEFAULT_BLAME) -> tuple[tuple[PairDetail, ...], int]:
    """The failing pairs (failures under `blame`, `corpus.store.failure_rule`) with the most errors (`fail`),
    or the passing pairs with the most surviving mutants (`blind`), with their findings (all of
    them, inherited ones included) and survivors."""
    if kind == "fail":
        chosen = pairs.filter(failure_expr(blame))
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
    by_pair_findings: dict[tuple[str, str], list[ShownFinding]] = {}
    for row in found.iter_rows(named=True):
        by_pair_findings.setdefault((row["run_id"], row["pair_id"]), []).append(ShownFinding(
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
