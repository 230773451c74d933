"""The five contract checks, in report order. Registering a check is one line in `CHECKS`.

Each module has a `NAME`, the contract attribute holding its settings (`SETTINGS`), and
`find(after, contract, before, severity)`, returning findings in frayproof's order. Checks know
nothing of reports, files or the CLI.
"""

from __future__ import annotations

from types import ModuleType

from frayproof_audit.checks import pinned_content, retention, structure, tool_pairs, unique_ids

AFTER_CHECKS: tuple[ModuleType, ...] = (tool_pairs, unique_ids, structure)
"""Checks that look at the after snapshot alone (all that `validate` runs)."""

BEFORE_CHECKS: tuple[ModuleType, ...] = (pinned_content, retention)
"""Checks that compare after against facts prepared from before."""

CHECKS = AFTER_CHECKS + BEFORE_CHECKS
CHECK_NAMES = tuple(module.NAME for module in CHECKS)

CONDITIONS: dict[str, str] = {
    condition: message for module in CHECKS for condition, message in module.CONDITIONS.items()
}
"""Every finding condition (spec ids such as `TP-ORPHAN`) and its fixed message; a message with
`{start}`/`{end}` fields is filled in per finding."""
