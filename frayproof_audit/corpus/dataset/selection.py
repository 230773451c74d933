"""Which rows of a dataset a stats, trend or report question is about, and which contract judged them.

`Selection` holds the filters the three commands share (`--run`, `--since`, `--until`,
`--compactor`, `--contract`). `choose_runs(out, selection)` lists the committed runs that
contribute rows to it and keeps those the question is about (`Chosen`), saying which it left
out and why: numbers of runs judged by different contracts are never added up silently.

* **Contracts.** By default (and with `--contract latest`) the runs of the newest contract: the
  contract of the selected run that started last. `--contract FINGERPRINT` (or a unique prefix
  of one) picks another, `--contract all` keeps every run, whatever judged it. Runs named with
  `--run` are taken as named: if they mix contracts, that is an error unless `--contract` says
  what to do with them.
* **Failed runs** (`runs.status = 'failed'`: no record could be checked) are left out unless
  named with `--run`: their rows are all input errors, and a night of them is no night of logs.
* **Rejudged runs.** A run made by `rejudge` (`runs.rejudge_of`) stands in for its original only
  while the original was judged by another contract; once the original itself is judged by the
  same contract (re-audited under its own run id), the rejudged copy is left out, so no night
  counts twice.

A run's contract key is `runs.contract_fingerprint` (the hash of the normalised contract).
Runs written before that column existed (tables schema 1–3) have it null; their stored
`contract_text` is parsed with today's rules and its fingerprint used, so an older run with
the same contract joins the newer ones. A text that no longer parses keeps a group of its own,
`sha256:<contract_sha256>`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime

import polars as pl

from frayproof_audit.checks import CHECKS
from frayproof_audit.contract import Contract, ContractError, parse_contract
from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.corpus.store.run_status import RunStatus, derived_status
from frayproof_audit.errors import InputError

SHA_PREFIX = "sha256:"
"""Prefix of a contract key made from the text's hash (its contract no longer parses)."""
LATEST, ALL = "latest", "all"
"""The `--contract` choices besides a fingerprint."""
MIN_PREFIX = 4
"""Shortest fingerprint prefix `--contract` takes (people copy the 12 digits the tools show)."""


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
    contract: str | None = None
    """`latest`, `all`, a contract fingerprint (or a prefix of one), or None: the default, which
    is `latest` except that runs named with `runs` must then share one contract."""

    def __post_init__(self) -> None:
        if self.since is not None and self.until is not None and self.since > self.until:
            raise SelectionError(f"--since {self.since} is after --until {self.until}")
        if self.contract is not None and self.contract not in (LATEST, ALL) and (
                len(self.contract.removeprefix(SHA_PREFIX)) < MIN_PREFIX):
            raise SelectionError(f"--contract {self.contract!r}: give latest, all, or a contract"
                                 f" fingerprint (at least {MIN_PREFIX} of its digits)")

    def of_runs(self, runs: Iterable[RunInfo]) -> Selection:
        """The same filters on rows, restricted to exactly `runs` (what `choose_runs` chose)."""
        return Selection(tuple(run.run_id for run in runs), self.since, self.until, self.compactors,
                         self.contract)

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

    def describe_rows(self) -> str:
        """The filters on rows in words, without the run ids (`describe` of a chosen selection
        would list every run)."""
        return replace(self, runs=()).describe()


@dataclass(frozen=True, slots=True)
class RunInfo:
    """A committed run that contributes rows to a selection."""

    run_id: str
    started_at: datetime
    contract: str
    """The contract key: the fingerprint, or `sha256:<hash>` (see the module docstring)."""
    contract_text: str
    schema_version: int = 5
    """Tables schema the run was written with (runs before 2 have no condition codes)."""
    status: RunStatus = RunStatus.OK
    rejudge_of: str | None = None
    """The run whose inputs this one judged again (`rejudge`), or None."""


def runs_in(out: str | os.PathLike[str], selection: Selection) -> list[RunInfo]:
    """The committed runs with at least one `pairs` row in `selection` (its contract aside),
    oldest first."""
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
        .select(*_RUN_COLUMNS)
        .join(present, on="run_id", how="semi")
        .sort("started_at", "run_id")
        .collect()
    )
    return run_infos(rows)


_RUN_COLUMNS = ("run_id", "started_at", "contract_fingerprint", "contract_sha256", "contract_text",
                "schema_version", "status", "pairs", "passed", "failed", "rejudge_of")
"""The `runs` columns a `RunInfo` is made of."""


def run_infos(rows: pl.DataFrame) -> list[RunInfo]:
    """`RunInfo`s of `runs` rows (with at least `_RUN_COLUMNS`), in their order: each with its
    contract key and status (see the module docstring)."""
    keys: dict[str, str] = {}
    found = []
    for row in rows.iter_rows(named=True):
        key = row["contract_fingerprint"] or keys.get(row["contract_text"])
        if key is None:
            key = keys[row["contract_text"]] = _fingerprint(row["contract_text"], row["contract_sha256"])
        status = derived_status(row["status"], row["pairs"], row["passed"], row["failed"])
        found.append(RunInfo(row["run_id"], row["started_at"], key, row["contract_text"],
                             row["schema_version"], status, row["rejudge_of"]))
    return found


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A run with rows in the selection that the question leaves out, and why."""

    run: RunInfo
    reason: str
    """`contract` (judged by another contract), `rejudged` (judged by another contract, and
    judged again by the chosen one: its copy counts), `failed` (nothing in it could be checked)
    or `superseded` (a rejudged copy whose original is now judged by the same contract)."""


@dataclass(frozen=True, slots=True)
class Chosen:
    """The runs a question is about (oldest first), and the ones it left out."""

    runs: tuple[RunInfo, ...]
    left_out: tuple[LeftOut, ...]
    choice: str
    """What chose the contract: `latest`, `all`, `named` (the runs `--run` named) or the
    fingerprint asked for."""

    @property
    def contracts(self) -> tuple[str, ...]:
        """The contract keys of the chosen runs, in the order their first runs started."""
        return tuple(dict.fromkeys(run.contract for run in self.runs))

    @property
    def contract(self) -> str | None:
        """The one contract key of the chosen runs (None: none, or several with `all`)."""
        keys = self.contracts
        return keys[0] if len(keys) == 1 else None

    def notes(self) -> tuple[str, ...]:
        """One line per kind of run left out, for the header of every output (empty: none)."""
        lines = []
        others = [item.run for item in self.left_out if item.reason == "contract"]
        if others:
            keys: dict[str, list[str]] = {}
            for run in others:
                keys.setdefault(short(run.contract), []).append(run.run_id)
            which = "; ".join(f"contract {key}: {_ids(ids)}" for key, ids in keys.items())
            mine = short(self.contract) if self.contract else "?"
            lines.append(f"Contract {mine} ({self.choice}): left out {len(others)} run(s) of"
                         f" {len(keys)} other contract(s) ({which}); --contract all|FINGERPRINT"
                         " to choose, or rejudge them")
        failed = [item.run.run_id for item in self.left_out if item.reason == "failed"]
        if failed:
            lines.append(f"Left out {len(failed)} failed run(s), where no record could be checked:"
                         f" {_ids(failed)} (name one with --run to see it; `runs --delete` removes it)")
        rejudged = [item.run.run_id for item in self.left_out if item.reason == "rejudged"]
        if rejudged:
            lines.append(f"Left out {len(rejudged)} run(s) judged again by this contract, whose"
                         f" rejudged copies count instead: {_ids(rejudged)}")
        superseded = [item.run.run_id for item in self.left_out if item.reason == "superseded"]
        if superseded:
            lines.append(f"Left out {len(superseded)} rejudged run(s) whose original run is now"
                         f" judged by the same contract: {_ids(superseded)}")
        return tuple(lines)

    def to_dict(self) -> list[dict[str, str]]:
        return [{"run_id": item.run.run_id, "contract": item.run.contract, "reason": item.reason}
                for item in self.left_out]


def _ids(ids: list[str], cap: int = 8) -> str:
    return ", ".join(ids[:cap]) + (f" and {len(ids) - cap} more" if len(ids) > cap else "")


def choose_runs(out: str | os.PathLike[str], selection: Selection) -> Chosen:
    """The committed runs with rows in `selection` that its contract choice keeps (see the
    module docstring), and those it leaves out; `MixedContracts` when runs named with `--run`
    mix contracts and no `--contract` says what to do, `SelectionError` for a fingerprint that
    names no run (or several contracts)."""
    every = runs_in(out, selection)
    named = set(selection.runs)
    left: list[LeftOut] = []
    kept: list[RunInfo] = []
    contract_of_run = {run.run_id: run.contract for run in every}
    for run in every:
        if run.status is RunStatus.FAILED and run.run_id not in named:
            left.append(LeftOut(run, "failed"))
        elif (run.rejudge_of is not None and run.run_id not in named
              and contract_of_run.get(run.rejudge_of) == run.contract):
            left.append(LeftOut(run, "superseded"))
        else:
            kept.append(run)
    choice = selection.contract
    if choice is None and named:
        one_contract(kept)  # MixedContracts, naming the runs of each contract
        return Chosen(tuple(kept), tuple(left), "named")
    if choice == ALL:
        return Chosen(tuple(kept), tuple(left), ALL)
    if choice is None or choice == LATEST:
        wanted = kept[-1].contract if kept else None
        label = LATEST
    else:
        wanted = _matching(choice, kept)
        label = f"--contract {choice}"
    chosen = [run for run in kept if run.contract == wanted]
    copied = {run.rejudge_of for run in chosen}
    left.extend(LeftOut(run, "rejudged" if run.run_id in copied else "contract")
                for run in kept if run.contract != wanted)
    left.sort(key=lambda item: (item.run.started_at, item.run.run_id))
    return Chosen(tuple(chosen), tuple(left), label)


def nothing_chosen(out: str | os.PathLike[str], selection: Selection, chosen: Chosen) -> str:
    """Why a question has no run to answer from: no pairs, or every run left out (named)."""
    where = f" ({selection.describe()})" if selection.describe() else ""
    if not chosen.left_out:
        return f"no committed pairs in '{out}'{where}"
    return f"no run to count in '{out}'{where}: " + " ".join(chosen.notes())


def _matching(asked: str, runs: list[RunInfo]) -> str:
    """The contract key `--contract` names: equal to it, or starting with it."""
    keys = list(dict.fromkeys(run.contract for run in runs))
    found = [key for key in keys if key == asked or key.removeprefix(SHA_PREFIX).startswith(
        asked.removeprefix(SHA_PREFIX))]
    if len(found) == 1:
        return found[0]
    known = ", ".join(f"{short(key)} ({sum(run.contract == key for run in runs)} run(s))"
                      for key in keys) or "none"
    if not found:
        raise SelectionError(f"--contract {asked}: no selected run was judged by that contract"
                             f" (contracts: {known})")
    raise SelectionError(f"--contract {asked} names {len(found)} contracts: give more digits"
                         f" (contracts: {known})")


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
        + "\nselect one contract's runs with --contract FINGERPRINT, --run or --since/--until"
          " (--contract all adds them up)"
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
