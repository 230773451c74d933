"""One rule as `suggest` writes it into a contract, and the findings that are its own.

A `Setting` is a piece of a contract document (a check block, a pin, a retention field, with
the tool schemas it brings) plus the key by which its error findings are recognized in a report
(the finding's check, and its pin or retention rule). Rules are judged by the engine on whole
contracts; attributing each error finding to the rule that owns it is what lets one `check`
per pair measure every rule at once, and lets one mutation run say which rule caught a mutant
first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from frayproof_audit.report import Violation

FINDING_NAME = {"tool_pairs": "tool_pair_integrity"}
"""The check name findings carry, where it differs from the contract key."""

DEFAULT_ON = ("tool_pairs", "unique_tool_ids", "structure")
"""Checks a contract runs unless it turns them off (tool_arguments too, once there are tools)."""


@dataclass(frozen=True, slots=True)
class Setting:
    key: str
    """Stable id: `checks.<key>`, `pins.<name>`, `retain.<field>`."""
    section: str
    """`checks`, `pins` or `retain`."""
    field: str
    """The check key, the pin's name or the retention field."""
    value: Any
    """What is written: a check's `true`/`false`/options mapping, a pin mapping, a retain value."""
    compare: str | None = None
    """For `recent_exchanges` and `tool_results`: the `retain.compare` they are measured under."""
    tools: tuple[dict[str, Any], ...] = dataclasses.field(default=(), compare=False)
    """Tool definitions the rule brings (inferred schemas for `checks.tool_arguments`)."""

    @property
    def gates(self) -> bool:
        """Whether the setting can fail a pair (a disabled check cannot)."""
        return self.value is not False

    def owns(self, violation: Violation) -> bool:
        if violation.severity != "error":
            return False
        if self.section == "checks":
            return violation.check == FINDING_NAME.get(self.field, self.field)
        if self.section == "pins":
            return violation.check == "pinned_content" and violation.pin == self.field
        return violation.check == "retention" and violation.rule == self.field


def document(settings: Sequence[Setting], fmt: str, *, isolated: bool) -> dict[str, Any]:
    """A contract document holding exactly `settings`.

    `isolated`: every check the settings do not name is off (format notes too), so a report
    holds only the settings' own findings; otherwise unnamed checks keep their defaults.
    """
    checks: dict[str, Any] = {}
    if isolated:
        checks = {key: False for key in (*DEFAULT_ON, "tool_arguments", "format_notes")}
    pins: list[Any] = []
    retain: dict[str, Any] = {}
    tools: list[dict[str, Any]] = []
    for setting in settings:
        if setting.section == "checks":
            checks[setting.field] = setting.value
        elif setting.section == "pins":
            pins.append(setting.value)
        else:
            retain[setting.field] = setting.value
            if setting.compare == "equivalent":
                retain["compare"] = "equivalent"
        tools.extend(setting.tools)
    doc: dict[str, Any] = {"version": 1, "format": fmt}
    if checks:
        doc["checks"] = checks
    if pins:
        doc["pins"] = pins
    if retain:
        doc["retain"] = retain
    if tools:
        doc["tools"] = tools
    return doc
