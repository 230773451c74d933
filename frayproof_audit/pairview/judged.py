"""A pair given as two snapshot files, judged on the spot and viewed (`show --before B --after A`):
the contract's findings, and for a passing pair the mutants that survived on it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from frayproof_audit.contract import load_contract
from frayproof_audit.engine import check_loaded
from frayproof_audit.errors import InputError
from frayproof_audit.files import UnreadableFile, read_regular_file
from frayproof_audit.jsonio import JSONProblem
from frayproof_audit.pairview.view import Finding, PairView, Survivor, build_view, survivor_rule
from frayproof_audit.report import Report
from frayproof_audit.snapshot import MAX_SNAPSHOT_BYTES, FormatLike, parse_snapshot_bytes, resolve_format


@dataclass(frozen=True)
class JudgedPair:
    """The view of a pair judged here, its report (which owns the exit code) and the format read."""

    view: PairView
    report: Report
    format: str
    mutants: int | None
    """Mutants judged (caught + survived); None when mutation did not run."""


def _read(path: str | os.PathLike[str]) -> Any:
    try:
        return parse_snapshot_bytes(read_regular_file(path, MAX_SNAPSHOT_BYTES))
    except (UnreadableFile, JSONProblem) as exc:
        raise InputError(f"Cannot read snapshot '{os.fspath(path)}': {exc}") from None


def judge_files(before: str | os.PathLike[str], after: str | os.PathLike[str], contract: Any = None,
                input_format: FormatLike = None, *, mutate: bool = True) -> JudgedPair:
    """Read both files in `input_format` (else the contract's), judge them, and for a passing
    pair run mutation testing to show what would slip through."""
    resolved = load_contract(contract)
    fmt = resolve_format(input_format or resolved.format)
    raw_before, raw_after = _read(before), _read(after)
    loaded = []
    for path, raw in ((before, raw_before), (after, raw_after)):
        if type(raw) not in fmt.containers and not isinstance(raw, str):
            raise InputError(f"Cannot read snapshot '{os.fspath(path)}': top level must be an array of "
                             "message objects")
        try:
            loaded.append(fmt.load_copy(raw))
        except InputError as exc:
            raise InputError(f"Snapshot '{os.fspath(path)}': {exc}") from None
    old, new = loaded
    report = check_loaded(old, new, resolved)
    survivors: list[Survivor] = []
    judged = None
    if mutate and report.passed:
        from frayproof_audit.mutate import mutate_pair  # only a passing pair pays for mutation

        outcome = mutate_pair(old, new, resolved, baseline=report)
        judged = outcome.caught + outcome.survived
        survivors = [Survivor(m.operator, m.description, m.sites, survivor_rule(m.operator, m.reason))
                     for m in outcome.mutants if m.status == "survived"]
    view = build_view(old, new, raw_before, raw_after, [Finding.of(v) for v in report.violations], survivors)
    return JudgedPair(view, report, new.format.name, judged)
