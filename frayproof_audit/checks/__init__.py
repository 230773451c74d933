"""The registered checks, in report order. Registering a check is one line in `CHECKS`.

Each module defines one `CHECK` record (`checks.base.Check`): its finding name, contract key,
options, conditions with stable codes (and whether a repair fixes each), `find(after, contract,
before, settings)`, which returns findings in frayproof's order, and optionally its facts of the
before snapshot (`prepare`) and mutation's re-check of a mutant (`recheck`). Checks know nothing
of reports, files or the CLI. Everything else (the contract schema, the engine, the before
facts, the mutation evaluator, repair, the docs meta-tests) reads this table: the contract, the
engine, mutation and repair read `CHECKS` when they run, so replacing it registers a check for
all of them; the lookups below are derived from it once, at import.
"""

from __future__ import annotations

from frayproof_audit.checks import (
    format_notes,
    pinned_content,
    provider_validity,
    retention,
    structure,
    tool_arguments,
    tool_call_integrity,
    tool_pairs,
    unique_tool_ids,
)
from frayproof_audit.checks.base import Check, CheckSettings, Condition

CHECKS: tuple[Check, ...] = (
    tool_pairs.CHECK,
    unique_tool_ids.CHECK,
    structure.CHECK,
    pinned_content.CHECK,
    retention.CHECK,
    tool_arguments.CHECK,
    tool_call_integrity.CHECK,
    format_notes.CHECK,
    provider_validity.CHECK,
)
"""Report order: frayproof's for the first five; a new check is appended."""

CHECK_NAMES = tuple(check.name for check in CHECKS)

CONDITIONS: dict[str, Condition] = {
    condition.code: condition for check in CHECKS for condition in check.conditions
}
"""Every condition code of every registered check."""


def repairable_codes(registry: tuple[Check, ...]) -> frozenset[str]:
    """The condition codes of `registry` (pass `CHECKS`) a transcript repair can make go away,
    derived once per registry."""
    known = _REPAIRABLE.get(id(registry))
    if known is None or known[0] is not registry:
        known = (registry, frozenset(condition.code for check in registry
                                     for condition in check.conditions if condition.repairable))
        _REPAIRABLE[id(registry)] = known
    return known[1]


_REPAIRABLE: dict[int, tuple[tuple[Check, ...], frozenset[str]]] = {}


__all__ = [
    "CHECKS",
    "CHECK_NAMES",
    "CONDITIONS",
    "Check",
    "CheckSettings",
    "Condition",
    "repairable_codes",
]
