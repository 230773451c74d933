"""`validate` and `check`: resolve the contract, load snapshots, run the checks in order."""

from __future__ import annotations

from typing import Any

from frayproof_audit.checks import AFTER_CHECKS, BEFORE_CHECKS
from frayproof_audit.contract import CheckSettings, Contract, load_contract
from frayproof_audit.errors import InputError
from frayproof_audit.prepared import BeforeFacts, prepare_before
from frayproof_audit.report import Report, Violation
from frayproof_audit.snapshot import Loaded, load_source


def validate(messages: Any, contract: Any = None) -> Report:
    """Check one snapshot on its own: tool pairing, unique ids, structure.

    Enabled pins or active retention rules need a before snapshot, so they are an input error
    here rather than silently skipped.
    """
    resolved = load_contract(contract)
    if resolved.pins and resolved.pinned_content.enabled:
        raise InputError("The contract has pins, which need a before snapshot: use check")
    if resolved.retain.active and resolved.retention.enabled:
        raise InputError("The contract has retention rules, which need a before snapshot: use check")
    return evaluate(load_source(messages), resolved, None)


def check(before: Any, after: Any, contract: Any = None) -> Report:
    """Check `after` on its own and against `before` (pins and retention)."""
    resolved = load_contract(contract)
    loaded_before = load_source(before)
    loaded_after = load_source(after)
    return check_loaded(loaded_before, loaded_after, resolved)


def check_loaded(before: Loaded, after: Loaded, contract: Contract) -> Report:
    return evaluate(after, contract, prepare_before(before, contract))


def evaluate(after: Loaded, contract: Contract, before: BeforeFacts | None) -> Report:
    """Run every enabled check on an already loaded after snapshot, in report order."""
    return Report(tuple(findings(after, contract, before)))


def findings(after: Loaded, contract: Contract, before: BeforeFacts | None) -> list[Violation]:
    found: list[Violation] = []
    for module in AFTER_CHECKS:
        settings: CheckSettings = getattr(contract, module.SETTINGS)
        if settings.enabled:
            found.extend(module.find(after, contract, before, settings.severity))
    if before is not None:
        for module in BEFORE_CHECKS:
            settings = getattr(contract, module.SETTINGS)
            if settings.enabled:
                found.extend(module.find(after, contract, before, settings.severity))
    return found
