"""The registered checks, in report order. Registering a check is one line in `CHECKS`.

Each module defines one `CHECK` record (`checks.base.Check`): its finding name, contract key,
options, conditions with stable codes, and `find(after, contract, before, settings)`, which
returns findings in frayproof's order. Checks know nothing of reports, files or the CLI.
Everything else (the contract schema, the engine, the mutation evaluator, the docs meta-tests)
reads this table.
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
    unique_ids,
)
from frayproof_audit.checks.base import Check, CheckSettings, Condition

CHECKS: tuple[Check, ...] = (
    tool_pairs.CHECK,
    unique_ids.CHECK,
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
CHECK_KEYS = tuple(check.key for check in CHECKS)
BY_KEY = {check.key: check for check in CHECKS}

CONDITIONS: dict[str, Condition] = {
    condition.code: condition for check in CHECKS for condition in check.conditions
}
"""Every condition code of every registered check."""

CHECK_OF_CODE: dict[str, str] = {
    condition.code: check.name for check in CHECKS for condition in check.conditions
}

__all__ = [
    "BY_KEY",
    "CHECKS",
    "CHECK_KEYS",
    "CHECK_NAMES",
    "CHECK_OF_CODE",
    "CONDITIONS",
    "Check",
    "CheckSettings",
    "Condition",
]
