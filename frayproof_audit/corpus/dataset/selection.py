"""Which rows of a dataset a stats or trend question is about, and which contract judged them.

`Selection` holds the filters both commands share (`--run`, `--since`, `--until`,
`--compactor`). `runs_in(out, selection)` lists the committed runs that contribute rows to it,
each with its contract key, and `one_contract` refuses a mix: numbers of runs judged by
different contracts are never added up silently.

A run's contract key is `runs.contract_fingerprint` (the hash of the normalised contract).
Runs written before that column existed (tables schema 1–3) have it null; their stored
`contract_text` is parsed with today's rules and its fingerprint used, so an older run with
the same contract joins the newer ones. A text that no longer parses keeps a group of its own,
`sha256:<contract_sha256>`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

import polars as pl

from frayproof_audit.checks import CHECKS
from frayproof_audit.contract import Contract, ContractError, parse_contract
from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.errors import InputError

SHA_PREFIX = "sha256:"
"""Prefix of a contract key made from the text's hash (its contract no longer parses)."""


class SelectionError(InputError):
    """Unusable filters, or a selection that mixes contracts (exit 2)."""


class MixedContracts(SelectionError):
    """The selected runs were judged by different contracts."""


@dataclass(frozen=True, slots=True)
class Selection:
    """Filters on the rows of every table; empty filters select everything committed."""

    runs: tuple[str, ...] = ()
    """Only these run ids."""
    since: date | None = None
    """Only rows with `log_date` on or after this day."""
    until: date | None = None
    """Only rows with `log_date` on or before this day."""
    compactors: tuple[str, ...] = ()
    """Only rows of these compactors."""

    def __post_init__(self) -> None:
        if self.since is not None and self.until is not None and self.since > self.until:
            raise SelectionError(f"--since {self.since} is after --until {self.until}")

    def apply(self, frame: pl.LazyFrame) -> pl.LazyFrame:
        """`frame` (pairs, findings or mutants) restricted to the selection; `log_date`
        filters are pushed down to the partition folders."""
        if self.runs:
            frame = frame.filter(pl.col("run_id").is_in(list(self.runs)))
        if self.since is not None:
            frame = frame.filter(pl.col("log_date") >= self.since)
        if self.until is not None:
            frame = frame.filter(pl.col("log_date") <= self.until)
        if self.compactors:
            frame = frame.filter(pl.col("compactor").is_in(list(self.compactors)))
        return frame

    def describe(self) -> str:
        """The filters in words, for headers ("" when nothing is filtered)."""
        parts = []
        if self.runs:
            parts.append("runs " + ", ".join(self.runs))
        if self.since is not None:
            parts.append(f"since {self.since}")
        if self.until is not None:
            parts.append(f"until {self.until}")
        if self.compactors:
            parts.append("compactors " + ", ".join(self.compactors))
        return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class RunInfo:
    """A committed run that contributes rows to a selection."""

    run_id: str
    started_at: datetime
    contract: str
    """The contract key: the fingerprint, or `sha256:<hash>` (see the module docstring)."""
    contract_text: str
    schema_version: int = 4
    """Tables schema the run was written with (runs before 2 have no condition codes)."""


def runs_in(out: str | os.PathLike[str], selection: Selection) -> list[RunInfo]:
    """The committed runs with at least one `pairs` row in `selection`, oldest first."""
    if selection.runs:
        known = set(read_table(out, "runs").select("run_id").collect()["run_id"])
        unknown = [run for run in selection.runs if run not in known]
        if unknown:
            raise SelectionError(f"no committed run {', '.join(map(repr, unknown))} in '{out}'")
    present = (
        selection.apply(read_table(out, "pairs").select("run_id", "log_date", "compactor"))
        .select("run_id").unique()
    )
    rows = (
        read_table(out, "runs")
        .select("run_id", "started_at", "contract_fingerprint", "contract_sha256", "contract_text",
                "schema_version")
        .join(present, on="run_id", how="semi")
        .sort("started_at", "run_id")
        .collect()
    )
    keys: dict[str, str] = {}
    found = []
    for row in rows.iter_rows(named=True):
        key = row["contract_fingerprint"] or keys.get(row["contract_text"])
        if key is None:
            key = keys[row["contract_text"]] = _fingerprint(row["contract_text"], row["contract_sha256"])
        found.append(RunInfo(row["run_id"], row["started_at"], key, row["contract_text"],
                             row["schema_version"]))
    return found


def _fingerprint(text: str, sha256: str) -> str:
    """Today's fingerprint of a stored contract text, or `sha256:<hash>` when it no longer parses."""
    try:
        return (parse_contract(text) if text.strip() else Contract()).fingerprint
    except ContractError:
        return SHA_PREFIX + sha256


def one_contract(runs: Iterable[RunInfo]) -> str | None:
    """The one contract key of `runs` (None when there are none); `MixedContracts` naming every
    run by contract when they disagree."""
    groups: dict[str, list[str]] = {}
    for run in runs:
        groups.setdefault(run.contract, []).append(run.run_id)
    if len(groups) <= 1:
        return next(iter(groups), None)
    lines = [f"  contract {short(key)}: runs {', '.join(ids)}" for key, ids in groups.items()]
    raise MixedContracts(
        f"the selected runs were judged by {len(groups)} different contracts, and their numbers"
        " cannot be added up:\n" + "\n".join(lines)
        + "\nselect one contract's runs with --run or --since/--until"
    )


def short(key: str) -> str:
    """A contract key as people read it: 12 hex digits (keeping a `sha256:` prefix)."""
    if key.startswith(SHA_PREFIX):
        return SHA_PREFIX + key[len(SHA_PREFIX):][:12]
    return key[:12]


def contract_of(runs: list[RunInfo]) -> Contract | None:
    """The `Contract` the runs were judged by (parsed from the first run's stored text), or None
    when there are no runs or the text no longer parses."""
    if not runs:
        return None
    text = runs[0].contract_text
    try:
        return parse_contract(text) if text.strip() else Contract()
    except ContractError:
        return None


def active_conditions(contract: Contract | None) -> dict[str, tuple[str, ...]]:
    """Check name → its condition codes, for every check the contract had running (enabled,
    and asked something of), in report order: the rows stats and trends show even at zero."""
    if contract is None:
        return {}
    found = {}
    for check in CHECKS:
        settings = contract.settings(check.key)
        if settings.enabled and (check.active is None or check.active(contract)):
            found[check.name] = tuple(condition.code for condition in check.conditions)
    return found
