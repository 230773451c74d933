"""`validate` and `check`: resolve the contract and format, load snapshots, run the checks;
`check_blamed`, the audit's, also says whose each finding is (`blame`).

The registered checks (`checks.CHECKS`, read when a pair is judged) run in registry order,
which is frayproof's report order for its five; checks that compare against the before
snapshot run only when there is one, against the facts each took from it (`prepare_before`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import frayproof_audit.checks as registry
from frayproof_audit import blame
from frayproof_audit.contract import Contract, load_contract
from frayproof_audit.errors import InputError
from frayproof_audit.formats import Format
from frayproof_audit.loaded import Loaded
from frayproof_audit.prepared import BeforeFacts
from frayproof_audit.report import Report, Violation
from frayproof_audit.snapshot import load_source


def validate(messages: Any, contract: Any = None, *, input_format: Format | str | None = None) -> Report:
    """Check one snapshot on its own: tool pairing, unique ids, structure.

    Enabled before-snapshot checks the contract makes active (pins, retention rules) are an
    input error here rather than silently skipped. `input_format` overrides the contract's.
    """
    resolved = load_contract(contract)
    for registered in registry.CHECKS:
        active = registered.active
        if (registered.needs_before and resolved.settings(registered.key).enabled
                and active is not None and active(resolved)):
            raise InputError(
                f"The contract has {registered.asks_for}, which need a before snapshot: use check")
    loaded = load_source(messages, input_format or resolved.format, copy=False)
    return localize(evaluate(loaded, resolved, None), loaded, None)


def check(
    before: Any, after: Any, contract: Any = None, *, input_format: Format | str | None = None
) -> Report:
    """Check `after` on its own and against `before` (pins and retention).

    Both snapshots are read in `input_format`, else the contract's `format`.
    """
    resolved = load_contract(contract)
    fmt = input_format or resolved.format
    # Validated in place, not copied: the report keeps nothing of the snapshots.
    loaded_before = load_source(before, fmt, copy=False)
    loaded_after = load_source(after, fmt, copy=False)
    return check_loaded(loaded_before, loaded_after, resolved)


def check_loaded(before: Loaded, after: Loaded, contract: Contract) -> Report:
    """Check a loaded pair; findings point at wire messages (see `localize`)."""
    return localize(evaluate(after, contract, prepare_before(before, contract)), after, before)


def check_blamed(before: Loaded, after: Loaded, contract: Contract) -> tuple[Report, tuple[str, ...]]:
    """`check_loaded`'s report and each finding's origin (`blame`), in report order. The
    baseline (`check(before, before)`, against the same before facts) is judged only when the
    pair has a finding, and only by the checks that found something: a clean pair costs
    nothing more."""
    facts = prepare_before(before, contract)
    report = evaluate(after, contract, facts)
    found: tuple[str, ...] = ()
    if report.violations:
        # Only the checks with a finding: a baseline finding of another check matches nothing.
        named = {violation.check for violation in report.violations}
        baseline = [violation for registered in registry.CHECKS if registered.name in named
                    for violation in registered.find(before, contract, facts,
                                                     contract.settings(registered.key))]
        found = blame.origins(report, Report(tuple(baseline)), after, before)
    return localize(report, after, before), found


def prepare_before(before: Loaded, contract: Contract) -> BeforeFacts:
    """What each registered check takes from the before snapshot (`Check.prepare`), once per
    pair: mutation judges every mutant against the same facts."""
    return BeforeFacts(before, {registered.key: registered.prepare(before, contract)
                                for registered in registry.CHECKS if registered.prepare is not None})


def localize(report: Report, after: Loaded, before: Loaded | None) -> Report:
    """Findings with their message index in the user's wire data rather than the neutral
    model's, for formats that split a wire message into several neutral ones (a no-op for
    `openai`, where both are the same)."""
    if after.origins is None and (before is None or before.origins is None):
        return report
    return Report(tuple(_localized(v, after, before) for v in report.violations))


def _localized(violation: Violation, after: Loaded, before: Loaded | None) -> Violation:
    snapshot = after if violation.snapshot == "after" else before
    if violation.message_index is None or snapshot is None or snapshot.origins is None:
        return violation
    return replace(violation, message_index=snapshot.wire_index(violation.message_index))


def evaluate(after: Loaded, contract: Contract, before: BeforeFacts | None) -> Report:
    """Run every enabled check on an already loaded after snapshot, in report order."""
    return Report(tuple(findings(after, contract, before)))


def findings(after: Loaded, contract: Contract, before: BeforeFacts | None) -> list[Violation]:
    found: list[Violation] = []
    for judged in findings_by_check(after, contract, before).values():
        found += judged
    return found


def findings_by_check(after: Loaded, contract: Contract,
                      before: BeforeFacts | None) -> dict[str, list[Violation]]:
    """Each enabled check's findings by its name, in report order (mutation keeps them per
    check for its re-checks; the report is them in order)."""
    found: dict[str, list[Violation]] = {}
    for registered in registry.CHECKS:
        if registered.needs_before and before is None:
            continue
        settings = contract.settings(registered.key)
        if settings.enabled:
            found[registered.name] = registered.find(after, contract, before, settings)
    return found


def split_by_check(report: Report, after: Loaded, before: Loaded | None,
                   contract: Contract) -> dict[str, list[Violation]] | None:
    """`findings_by_check` recovered from a report `check_loaded` made of the same pair, or
    None when it cannot be: findings moved by `localize` (a format whose wire messages hold
    several neutral ones), or not in the enabled checks' order. A finding names its check
    (`Check.name`), and each check's findings are contiguous in report order, so this is exact."""
    if after.origins is not None or (before is not None and before.origins is not None):
        return None
    found: dict[str, list[Violation]] = {
        registered.name: [] for registered in registry.CHECKS
        if not (registered.needs_before and before is None)
        and contract.settings(registered.key).enabled
    }
    names = list(found)
    at = 0
    for violation in report.violations:
        while at < len(names) and names[at] != violation.check:
            at += 1
        if at == len(names):
            return None
        found[names[at]].append(violation)
    return found
